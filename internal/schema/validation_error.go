package schema

import (
	"cmp"
	json "encoding/json/v2"
	"fmt"
	"slices"
	"strconv"
	"strings"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// maxShownIssues bounds how many issues Error spells out; the rest are
// counted. Issues keeps them all.
const maxShownIssues = 3

// ValidationError reports why an instance does not satisfy a schema. Its
// message is short and meant for the party that sent the instance (a model,
// a user): JSON pointer paths and plain reasons, no Go types. errors.Is(err,
// ErrInvalid) is true for every *ValidationError.
type ValidationError struct {
	// Issues lists each failed check, sorted by Path; never empty.
	Issues []Issue
}

// Issue is one failed check.
type Issue struct {
	// Path is the JSON pointer (RFC 6901) of the offending value; "" is the
	// instance itself.
	Path string
	// Reason says what is wrong, e.g. `missing property "text"` or
	// `got string, want integer`.
	Reason string
}

// Error reads like
// `validation failed: at "": missing property "text"; at "/age": got string, want integer`.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("validation failed")
	for i, is := range e.Issues {
		if i == maxShownIssues {
			fmt.Fprintf(&b, " (and %d more)", len(e.Issues)-i)
			break
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "at %s: %s", strconv.Quote(is.Path), is.Reason)
	}
	return b.String()
}

// Is reports whether target is ErrInvalid.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// invalid builds a *ValidationError from issues, sorted and deduplicated.
func invalid(issues ...Issue) *ValidationError {
	slices.SortStableFunc(issues, func(a, b Issue) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Reason, b.Reason))
	})
	return &ValidationError{Issues: slices.Compact(issues)}
}

// notJSON is the *ValidationError for an instance that does not parse.
func notJSON(err error) *ValidationError {
	return invalid(Issue{Path: "", Reason: "invalid JSON: " + err.Error()})
}

// fromLibrary turns the validator library's error tree into issues: one per
// leaf failure, with the structural wrappers ($ref, allOf, grouping) dropped.
func fromLibrary(verr *jsv.ValidationError) *ValidationError {
	var issues []Issue
	collectIssues(verr, &issues)
	if len(issues) == 0 {
		issues = append(issues, Issue{Path: pointer(verr.InstanceLocation), Reason: "invalid value"})
	}
	return invalid(issues...)
}

func collectIssues(e *jsv.ValidationError, out *[]Issue) {
	switch e.ErrorKind.(type) {
	case *kind.Schema, *kind.Reference, *kind.Group, *kind.AllOf:
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				collectIssues(c, out)
			}
			return
		}
	}
	*out = append(*out, Issue{Path: pointer(e.InstanceLocation), Reason: reason(e)})
}

// reason words one failure. Kinds whose library wording carries single
// quotes, Go types or jargon get their own; the rest keep the library's.
func reason(e *jsv.ValidationError) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		return plural("missing property ", "missing properties ", k.Missing)
	case *kind.AdditionalProperties:
		// The library walks a map: sort for a stable message.
		return plural("unexpected property ", "unexpected properties ", slices.Sorted(slices.Values(k.Properties)))
	case *kind.Type:
		return fmt.Sprintf("got %s, want %s", k.Got, strings.Join(k.Want, " or "))
	case *kind.Enum:
		return "must be one of " + joinJSON(k.Want)
	case *kind.Const:
		return "must be " + joinJSON([]any{k.Want})
	case *kind.Pattern:
		return fmt.Sprintf("%s does not match pattern %s", strconv.Quote(k.Got), strconv.Quote(k.Want))
	case *kind.Format:
		return fmt.Sprintf("%s is not a valid %s", joinJSON([]any{k.Got}), k.Want)
	case *kind.FalseSchema:
		return "no value is allowed here"
	case *kind.InvalidJsonValue:
		return "not a JSON value"
	case *kind.AnyOf:
		return alternatives(e)
	case *kind.OneOf:
		if len(k.Subschemas) > 0 {
			return "matches more than one allowed alternative"
		}
		return alternatives(e)
	}
	return libraryReason(e.ErrorKind)
}

// alternatives words a failed anyOf/oneOf. When every alternative failed only
// on its type, as in a nullable field, it reads "got number, want string or
// null"; otherwise it says no alternative matched.
func alternatives(e *jsv.ValidationError) string {
	var got string
	var want []string
	for _, c := range e.Causes {
		t := soleTypeError(c)
		if t == nil {
			return "does not match any allowed alternative"
		}
		got = t.Got
		for _, w := range t.Want {
			if !slices.Contains(want, w) {
				want = append(want, w)
			}
		}
	}
	if got == "" {
		return "does not match any allowed alternative"
	}
	return fmt.Sprintf("got %s, want %s", got, strings.Join(want, " or "))
}

// soleTypeError returns the type failure that is e's only leaf, if any.
func soleTypeError(e *jsv.ValidationError) *kind.Type {
	for {
		switch k := e.ErrorKind.(type) {
		case *kind.Type:
			return k
		case *kind.Reference, *kind.Group, *kind.Schema:
			if len(e.Causes) != 1 {
				return nil
			}
			e = e.Causes[0]
		default:
			return nil
		}
	}
}

// libraryReason is the library's English wording for k. The library only
// formats whole errors, so format one at the root and cut the location off.
func libraryReason(k jsv.ErrorKind) string {
	msg := (&jsv.ValidationError{ErrorKind: k}).Error()
	if rest, ok := strings.CutPrefix(msg, "at '': "); ok {
		return rest
	}
	return msg
}

func plural(one, many string, names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	if len(quoted) == 1 {
		return one + quoted[0]
	}
	return many + strings.Join(quoted, ", ")
}

// joinJSON renders values as JSON, comma-separated; objects have their
// names sorted, so that a message reads the same every time.
func joinJSON(values []any) string {
	parts := make([]string, len(values))
	for i, v := range values {
		b, err := json.Marshal(v, json.Deterministic(true))
		if err != nil {
			parts[i] = "value"
			continue
		}
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}

// pointerEscaper escapes a reference token (RFC 6901 section 3).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointer renders instance-location tokens as a JSON pointer.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(pointerEscaper.Replace(t))
	}
	return b.String()
}
