// The script behind the app_search descriptor (its YAML types the input).
export default async function appSearch(input, ctx) {
  await ctx.tools.inputText({ text: input.query });
  return "searched";
}
