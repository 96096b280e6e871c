// Package schema derives JSON Schemas from Go types, validates JSON against
// them, and builds the flat forms that MCP elicitation (form mode) accepts.
//
// Three paths through the package:
//
//	Go type ──For / ForOutput──▶ JSON Schema (2020-12) ──▶ tools/list inputSchema, outputSchema
//	JSON Schema ──Compile──▶ *Validator ──Validate(args)──▶ nil | *ValidationError (errors.Is ErrInvalid)
//	Go struct ──FormFor──▶ *Form ──Schema()──▶ elicitation/create requestedSchema
//	                          └──Decode(content, &v, strict)──▶ v filled, or *ValidationError
//
// Schemas are reflected with github.com/invopop/jsonschema and its
// `jsonschema:"..."` tag grammar; validation uses
// github.com/santhosh-tekuri/jsonschema/v6. Reflection results and forms are
// cached per reflect.Type; a *Validator and a *Form are immutable and safe for
// concurrent use.
package schema
