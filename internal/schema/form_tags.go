package schema

import (
	"reflect"
	"strings"
)

// fieldTags is the `jsonschema` tag of one field, parsed with invopop's
// grammar: comma-separated `key=value` pairs (a comma inside a value is
// written `\,`), keys such as enum and default repeatable, and the bare words
// "required" and "-".
type fieldTags struct {
	values   map[string][]string // key → values in tag order
	required bool                // bare "required"
	ignored  bool                // "-": the field is left out
}

func parseTags(f reflect.StructField) fieldTags {
	parts := splitUnescaped(f.Tag.Get("jsonschema"))
	tags := fieldTags{values: map[string][]string{}, ignored: parts[0] == "-"}
	for _, p := range parts {
		key, value, ok := strings.Cut(p, "=")
		switch {
		case ok:
			tags.values[key] = append(tags.values[key], value)
		case p == "required":
			tags.required = true
		}
	}
	if d := f.Tag.Get("jsonschema_description"); d != "" && tags.values["description"] == nil {
		tags.values["description"] = []string{d}
	}
	return tags
}

// last returns the last value of key, as invopop lets a later one win.
func (t fieldTags) last(key string) (string, bool) {
	vs := t.values[key]
	if len(vs) == 0 {
		return "", false
	}
	return vs[len(vs)-1], true
}

// all returns every value of a repeatable key.
func (t fieldTags) all(key string) []string { return t.values[key] }

// splitUnescaped splits a tag on commas not preceded by a backslash and
// drops that backslash, like invopop's splitOnUnescapedCommas.
func splitUnescaped(tag string) []string {
	parts := strings.Split(tag, ",")
	out := []string{parts[0]}
	for _, p := range parts[1:] {
		if last := out[len(out)-1]; strings.HasSuffix(last, `\`) {
			out[len(out)-1] = strings.TrimSuffix(last, `\`) + "," + p
			continue
		}
		out = append(out, p)
	}
	return out
}
