// Package digest is the Flux oracle's stand-in for fluxcd/pkg/artifact/digest: a SHA-256
// digester, enough for Storage.Archive (the digest is not compared). This project's code.
package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
)

// Algorithm makes digesters.
type Algorithm struct{}

// Canonical is the algorithm Archive uses.
var Canonical = Algorithm{}

// Digester hashes what is written to it.
type Digester struct{ h hash.Hash }

// Digest is a digest's text.
type Digest string

func (d Digest) String() string { return string(d) }

// Digester starts a digest.
func (Algorithm) Digester() *Digester { return &Digester{h: sha256.New()} }

// Hash is the writer.
func (d *Digester) Hash() hash.Hash { return d.h }

// Digest is the digest of what was written.
func (d *Digester) Digest() Digest { return Digest("sha256:" + hex.EncodeToString(d.h.Sum(nil))) }
