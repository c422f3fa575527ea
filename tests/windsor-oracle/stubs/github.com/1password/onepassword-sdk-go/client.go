// Package onepassword is this project's stand-in for 1Password's Go SDK in the Windsor oracle:
// there is no 1Password account, so no client can be made and no secret is resolved.
package onepassword

import (
	"context"
	"errors"
)

// ErrNoAccount is what every call gives: the oracle has no 1Password account.
var ErrNoAccount = errors.New("windsor-oracle: no 1Password account")

// Client is a 1Password client; the oracle never makes one.
type Client struct{}

// ClientOption configures a Client.
type ClientOption func(*Client) error

// WithServiceAccountToken names the service account token (ignored).
func WithServiceAccountToken(string) ClientOption { return func(*Client) error { return nil } }

// WithIntegrationInfo names the integration (ignored).
func WithIntegrationInfo(string, string) ClientOption { return func(*Client) error { return nil } }

// NewClient always fails.
func NewClient(context.Context, ...ClientOption) (*Client, error) { return nil, ErrNoAccount }

// SecretsAPI resolves secret references.
type SecretsAPI struct{}

// Secrets gives the client's secrets API.
func (c *Client) Secrets() SecretsAPI { return SecretsAPI{} }

// Resolve always fails.
func (SecretsAPI) Resolve(context.Context, string) (string, error) { return "", ErrNoAccount }
