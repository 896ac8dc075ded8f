"""What we write for the compiler and for editors: trail modules (`codegen`, `argvalues`,
`linetable`), TypeScript from JSON Schema (`tsrender`), each trailmap's artifacts (`artifacts`, `sdk`)
and the trail JSON Schema (`trailschema`, `editorschema`)."""
