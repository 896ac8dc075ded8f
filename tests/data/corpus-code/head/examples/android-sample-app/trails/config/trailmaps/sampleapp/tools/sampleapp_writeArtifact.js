// Stand-in for the sample app's host-only artifact writer (see the NOTICE of tests/data/corpus-code).
export async function sampleapp_writeArtifact(input) {
  return `wrote ${input.relativePath ?? "artifact.txt"}`;
}
