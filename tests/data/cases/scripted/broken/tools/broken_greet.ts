// A scripted tool with a type error in its body: a tool finding, fatal, at the source line.
// expect: 12:11 tool TS2322 Type 'string' is not assignable to type 'number'.
import { trailblaze } from "@trailblaze/scripting";

export interface BrokenGreetInput {
  name: string;
}

export const broken_greet = trailblaze.tool<BrokenGreetInput, string>(
  { description: "Greet someone by name." },
  async (input) => {
    const count: number = input.name;
    return `hello ${count}`;
  },
);
