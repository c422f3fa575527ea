// Package remote is this project's stand-in for go-containerregistry's registry client in the
// Windsor oracle: there is no registry, so every call fails.
package remote

import (
	"errors"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

var errNoRegistry = errors.New("windsor-oracle: no registry")

// Option configures a call (ignored).
type Option func()

// Backoff is a retry policy.
type Backoff struct {
	Duration time.Duration
	Factor   float64
	Jitter   float64
	Steps    int
	Cap      time.Duration
}

// Descriptor is a fetched manifest.
type Descriptor struct {
	v1.Descriptor
}

// WithAuth is ignored.
func WithAuth(authn.Authenticator) Option { return func() {} }

// WithAuthFromKeychain is ignored.
func WithAuthFromKeychain(authn.Keychain) Option { return func() {} }

// WithRetryBackoff is ignored.
func WithRetryBackoff(Backoff) Option { return func() {} }

// Image fails.
func Image(name.Reference, ...Option) (v1.Image, error) { return nil, errNoRegistry }

// Get fails.
func Get(name.Reference, ...Option) (*Descriptor, error) { return nil, errNoRegistry }

// WriteLayer fails.
func WriteLayer(name.Repository, v1.Layer, ...Option) error { return errNoRegistry }

// Write fails.
func Write(name.Reference, v1.Image, ...Option) error { return errNoRegistry }

// List fails.
func List(name.Repository, ...Option) ([]string, error) { return nil, errNoRegistry }
