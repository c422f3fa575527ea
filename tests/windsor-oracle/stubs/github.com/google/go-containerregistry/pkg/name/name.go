// Package name is this project's stand-in for go-containerregistry's references in the Windsor
// oracle: a reference is kept as written (the oracle reaches no registry).
package name

import (
	"errors"
	"strings"
)

// Option configures parsing (ignored).
type Option func()

// Repository is registry/repository.
type Repository struct {
	repo string
}

// Name gives the repository as written.
func (r Repository) Name() string { return r.repo }

// String gives the repository as written.
func (r Repository) String() string { return r.repo }

// Digest names a blob in the repository.
func (r Repository) Digest(d string) Reference { return ref{repo: r, id: d, sep: "@"} }

// Reference is an image reference.
type Reference interface {
	Context() Repository
	Identifier() string
	Name() string
	String() string
}

type ref struct {
	repo    Repository
	id, sep string
}

func (r ref) Context() Repository { return r.repo }
func (r ref) Identifier() string  { return r.id }
func (r ref) Name() string        { return r.repo.repo + r.sep + r.id }
func (r ref) String() string      { return r.Name() }

// ParseReference splits repo[:tag|@digest].
func ParseReference(s string, _ ...Option) (Reference, error) {
	if s == "" {
		return nil, errors.New("name: empty reference")
	}
	if i := strings.LastIndex(s, "@"); i > 0 {
		return ref{repo: Repository{s[:i]}, id: s[i+1:], sep: "@"}, nil
	}
	if i := strings.LastIndex(s, ":"); i > strings.LastIndex(s, "/") {
		return ref{repo: Repository{s[:i]}, id: s[i+1:], sep: ":"}, nil
	}
	return ref{repo: Repository{s}, id: "latest", sep: ":"}, nil
}

// NewRepository keeps the repository as written.
func NewRepository(s string, _ ...Option) (Repository, error) {
	if s == "" {
		return Repository{}, errors.New("name: empty repository")
	}
	return Repository{s}, nil
}
