// Package jsonpointer is this project's stand-in for kaptinlin/jsonpointer (v0.4.28, which
// kaptinlin/jsonschema v0.9.8 uses, is not in the mirrors): RFC 6901 pointers, parsed and
// written, as much as the schema compiler asks of them.
package jsonpointer

import (
	"errors"
	"strings"
)

// Pointer is a parsed JSON pointer.
type Pointer struct {
	tokens []string
}

// Parse reads "" or "/a/b~1c~0d".
func Parse(s string) (Pointer, error) {
	if s == "" {
		return Pointer{}, nil
	}
	if !strings.HasPrefix(s, "/") {
		return Pointer{}, errors.New("jsonpointer: a pointer starts with /")
	}
	parts := strings.Split(s[1:], "/")
	for i, p := range parts {
		for j := 0; j < len(p); j++ {
			if p[j] == '~' && (j+1 >= len(p) || (p[j+1] != '0' && p[j+1] != '1')) {
				return Pointer{}, errors.New("jsonpointer: ~ is followed by 0 or 1")
			}
		}
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return Pointer{tokens: parts}, nil
}

// FromTokens makes a pointer from unescaped tokens.
func FromTokens(tokens ...string) Pointer {
	return Pointer{tokens: append([]string(nil), tokens...)}
}

// Tokens gives the unescaped tokens.
func (p Pointer) Tokens() []string { return append([]string(nil), p.tokens...) }

// String writes the pointer.
func (p Pointer) String() string {
	var b strings.Builder
	for _, t := range p.tokens {
		b.WriteString("/")
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}
