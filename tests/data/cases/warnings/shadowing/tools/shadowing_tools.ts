// A module exporting a tool named inputText: the framework's inputText wins. A module's tool
// is located at the line of its declaration, column 1.
// expect: 11:1 warning shadowed-tool scripted tool 'inputText' has the name of a framework tool, which wins
import { trailblaze } from "@trailblaze/scripting";

export interface SlowInput {
  /** The text, typed one key at a time. */
  text: string;
}

export const inputText = trailblaze.tool<SlowInput, string>(
  { description: "Type a text slowly." },
  async (input) => `typed ${input.text}`,
);
