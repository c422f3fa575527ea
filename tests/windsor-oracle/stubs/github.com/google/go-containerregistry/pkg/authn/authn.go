// Package authn is this project's stand-in for go-containerregistry's authn in the Windsor
// oracle: no credentials are read.
package authn

// Authenticator gives credentials.
type Authenticator interface{}

// Keychain finds credentials.
type Keychain interface{}

type anonymous struct{}
type keychain struct{}

// Anonymous gives none.
var Anonymous Authenticator = anonymous{}

// DefaultKeychain finds none.
var DefaultKeychain Keychain = keychain{}
