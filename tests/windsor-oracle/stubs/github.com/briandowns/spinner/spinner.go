// Package spinner is this project's stand-in for briandowns/spinner in the Windsor oracle: the
// oracle writes no progress to a terminal.
package spinner

import (
	"os"
	"time"
)

// CharSets are the animation frames (unused).
var CharSets = map[int][]string{14: {"."}}

// Spinner does nothing but remember whether it was started.
type Spinner struct {
	Suffix string
	active bool
}

// Option configures a Spinner (ignored).
type Option func(*Spinner)

// WithColor is ignored.
func WithColor(string) Option { return func(*Spinner) {} }

// WithWriterFile is ignored.
func WithWriterFile(*os.File) Option { return func(*Spinner) {} }

// New gives a stopped Spinner.
func New([]string, time.Duration, ...Option) *Spinner { return &Spinner{} }

// Start marks it active.
func (s *Spinner) Start() { s.active = true }

// Stop marks it stopped.
func (s *Spinner) Stop() { s.active = false }

// Active says whether it was started and not stopped.
func (s *Spinner) Active() bool { return s.active }
