// Package rest is this project's stand-in for client-go's rest in the Windsor oracle.
package rest

// Config is a cluster connection (never made).
type Config struct{}
