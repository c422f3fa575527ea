// Package transport is this project's stand-in for go-containerregistry's registry errors in the
// Windsor oracle.
package transport

// ErrorCode is a registry diagnostic code.
type ErrorCode string

// The codes the CLI names.
const (
	UnauthorizedErrorCode ErrorCode = "UNAUTHORIZED"
	DeniedErrorCode       ErrorCode = "DENIED"
)

// Diagnostic is one registry diagnostic.
type Diagnostic struct {
	Code    ErrorCode
	Message string
}

// Error is a registry error.
type Error struct {
	Errors     []Diagnostic
	StatusCode int
}

func (e *Error) Error() string { return "registry error" }
