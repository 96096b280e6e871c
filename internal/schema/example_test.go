package schema_test

import (
	"encoding/json/jsontext"
	"errors"
	"fmt"

	"github.com/mcp-actors/mcp-actors/internal/schema"
)

type greetArgs struct {
	Name  string `json:"name" jsonschema:"description=Who to greet,minLength=1"`
	Times *int   `json:"times" jsonschema:"minimum=1,maximum=3"`
}

func ExampleForType() {
	raw, err := schema.ForType[greetArgs]()
	if err != nil {
		panic(err)
	}
	fmt.Println(string(raw))
	// Output:
	// {"properties":{"name":{"type":"string","minLength":1,"description":"Who to greet"},"times":{"type":"integer","maximum":3,"minimum":1}},"type":"object","required":["name"]}
}

func ExampleCompile() {
	raw, _ := schema.ForType[greetArgs]()
	v, err := schema.Compile(raw)
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Validate(jsontext.Value(`{"name":"Ada","times":2}`)))
	err = v.Validate(jsontext.Value(`{"times":"twice"}`))
	fmt.Println(errors.Is(err, schema.ErrInvalid))
	fmt.Println(err)
	// Output:
	// <nil>
	// true
	// validation failed: at "": missing property "name"; at "/times": got string, want integer
}

type signup struct {
	Email  string   `json:"email" jsonschema:"title=Email,format=email"`
	Plan   string   `json:"plan" jsonschema:"enum=free,enum=pro,default=free"`
	Topics []string `json:"topics,omitempty" jsonschema:"enum=go,enum=mcp,maxItems=2"`
}

func ExampleFormFor() {
	form, err := schema.FormForType[signup]()
	if err != nil {
		panic(err)
	}
	fmt.Println(string(form.Schema()))

	var s signup
	err = form.Decode(jsontext.Value(`{"email":"ada@example.com","plan":"pro","topics":["mcp"]}`), &s, true)
	fmt.Printf("%v %+v\n", err, s)

	err = form.Decode(jsontext.Value(`{"email":"ada@example.com","plan":"gold","x":1}`), &s, true)
	fmt.Println(err)
	// Output:
	// {"type":"object","properties":{"email":{"type":"string","title":"Email","format":"email"},"plan":{"type":"string","enum":["free","pro"],"default":"free"},"topics":{"type":"array","maxItems":2,"items":{"type":"string","enum":["go","mcp"]}}},"required":["email","plan"]}
	// <nil> {Email:ada@example.com Plan:pro Topics:[mcp]}
	// validation failed: at "": unexpected property "x"; at "/plan": must be one of "free", "pro"
}
