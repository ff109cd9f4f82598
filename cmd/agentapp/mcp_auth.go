package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpclient/oauth"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/store"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// authFlags are the flags of `agentapp mcp` for remote servers: the
// transport, and the OAuth client for one-off use (a config file's oauth
// object says the same for a named server; the flags win).
type authFlags struct {
	transport         string
	clientID          string
	clientSecret      string
	clientMetadataURL string
	scopes            []string
	dataDir           string
}

func (a *authFlags) register(pf *pflag.FlagSet) {
	pf.StringVar(&a.transport, "transport", "", "HTTP transport: http (streamable) or sse (legacy); default: the config's type, else http with a fallback to sse")
	pf.StringVar(&a.clientID, "oauth-client-id", "", "OAuth client ID registered with the server's authorization server")
	pf.StringVar(&a.clientSecret, "oauth-client-secret", "", "secret of --oauth-client-id (default $AGENTAPP_OAUTH_CLIENT_SECRET)")
	pf.StringVar(&a.clientMetadataURL, "oauth-client-metadata-url", "", "https URL of a client ID metadata document, used when the server supports it")
	pf.StringArrayVar(&a.scopes, "oauth-scope", nil, "OAuth scope to ask for instead of the server's (repeatable, or several separated by spaces)")
	pf.StringVar(&a.dataDir, "data-dir", "", "data directory, where OAuth logins are stored (default $AGENTAPP_DATA_DIR, else the user's data directory)")
}

// apply puts the flags into cfg.
func (a *authFlags) apply(cfg *mcpconfig.Server) error {
	oauthSet := a.clientID != "" || a.clientSecret != "" || a.clientMetadataURL != "" || len(a.scopes) > 0
	if !cfg.IsHTTP() {
		if a.transport != "" || oauthSet {
			return errors.New("--transport and the --oauth-* flags apply to HTTP servers only")
		}
		return nil
	}
	switch a.transport {
	case "":
	case "http", "streamable-http":
		cfg.Transport = mcpconfig.TransportHTTP
	case "sse":
		cfg.Transport = mcpconfig.TransportSSE
	default:
		return fmt.Errorf("--transport %q: want http or sse", a.transport)
	}
	secret := a.clientSecret
	if secret == "" {
		secret = os.Getenv("AGENTAPP_OAUTH_CLIENT_SECRET")
	}
	if !oauthSet && secret == "" {
		return nil
	}
	o := &mcpconfig.OAuth{}
	if cfg.OAuth != nil {
		*o = *cfg.OAuth
	}
	if a.clientID != "" {
		o.ClientID, o.ClientSecret = a.clientID, ""
	}
	if secret != "" {
		o.ClientSecret = secret
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		return errors.New("--oauth-client-secret needs --oauth-client-id")
	}
	if a.clientMetadataURL != "" {
		if err := mcpconfig.CheckClientMetadataURL(a.clientMetadataURL); err != nil {
			return fmt.Errorf("--oauth-client-metadata-url: %v", err)
		}
		o.ClientMetadataURL = a.clientMetadataURL
	}
	if len(a.scopes) > 0 {
		o.Scopes = nil
		for _, s := range a.scopes {
			o.Scopes = append(o.Scopes, strings.Fields(s)...)
		}
	}
	cfg.OAuth = o
	return nil
}

// tokenStore is the store of OAuth logins in the data directory.
func (a *authFlags) tokenStore() (*oauth.TokenStore, error) {
	dir := a.dataDir
	if dir == "" {
		var err error
		if dir, err = store.DefaultDir(os.Getenv); err != nil {
			return nil, err
		}
	}
	return oauth.NewTokenStore(dir), nil
}

// oauthOption is the OAuth of `agentapp mcp`: a person is at the
// terminal, so a server that wants a login gets one (browser and all) on
// first use; the login is stored for the next runs.
func (a *authFlags) oauthOption(cmd *cobra.Command, f *mcpFlags) (mcpclient.ConnectOption, error) {
	ts, err := a.tokenStore()
	if err != nil {
		return nil, err
	}
	return mcpclient.WithOAuth(&oauth.Options{
		Store: ts, Interactive: true, Prompt: cmd.ErrOrStderr(),
		LoginHint: func(s mcpconfig.Server) string { return loginHint(s, f.config) },
	}), nil
}

// loginHint is the command that logs in to s: by name when it comes from
// a config file (the file may hold its oauth settings), else by URL.
func loginHint(s mcpconfig.Server, config string) string {
	if config != "" && s.Name != s.URL {
		return fmt.Sprintf("agentapp mcp login %s --config %s", s.Name, config)
	}
	return "agentapp mcp login " + s.URL
}

func newMCPLoginCmd(f *mcpFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "login NAME|URL [--config FILE]",
		Short: "Log in to a remote MCP server with OAuth and store the login",
		Long: `login runs the OAuth login of a remote MCP server now, over streamable HTTP
or the legacy SSE transport (--transport, else the config's type): the
authorization URL is printed on stderr and opened with $BROWSER (else the
system's opener), and the tokens are stored in the data directory (mode 0600)
for every later agentapp mcp and agentapp chat. An existing login is replaced.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := authTarget(cmd, f, args)
			if err != nil {
				return err
			}
			ts, err := f.auth.tokenStore()
			if err != nil {
				return err
			}
			if _, err := ts.Delete(cfg.URL); err != nil {
				return &exitError{mcpExitConnection, err}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opt, err := f.auth.oauthOption(cmd, f)
			if err != nil {
				return err
			}
			logger := cmdLogger(cmd, cmd.ErrOrStderr(), slog.LevelInfo)
			b, err := mcpclient.Connect(ctx, cfg, mcpclient.WithLogger(logger), opt)
			if err != nil {
				return &exitError{mcpExitConnection, err}
			}
			_ = b.Close()
			if !ts.Has(cfg.URL) {
				logger.Info(fmt.Sprintf("MCP server %s did not ask for a login; nothing was stored", cfg.Name))
				return nil
			}
			logger.Info(fmt.Sprintf("logged in to MCP server %s; the login is stored in %s", cfg.Name, ts.Path(cfg.URL)))
			return nil
		},
	}
}

func newMCPLogoutCmd(f *mcpFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "logout NAME|URL [--config FILE]",
		Short: "Delete the stored OAuth login of a remote MCP server",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := authTarget(cmd, f, args)
			if err != nil {
				return err
			}
			ts, err := f.auth.tokenStore()
			if err != nil {
				return err
			}
			had, err := ts.Delete(cfg.URL)
			if err != nil {
				return &exitError{mcpExitConnection, err}
			}
			logger := cmdLogger(cmd, cmd.ErrOrStderr(), slog.LevelInfo)
			if had {
				logger.Info(fmt.Sprintf("logged out of MCP server %s; its stored login was deleted", cfg.Name))
			} else {
				logger.Info(fmt.Sprintf("no stored login for MCP server %s; nothing to delete", cfg.Name))
			}
			return nil
		},
	}
}

// authTarget resolves the one NAME|URL argument of login and logout (or
// --server) to an HTTP server.
func authTarget(cmd *cobra.Command, f *mcpFlags, args []string) (mcpconfig.Server, error) {
	if cmd.ArgsLenAtDash() >= 0 {
		return mcpconfig.Server{}, mcpUsageError(cmd, "a stdio server needs no login; give a server URL or NAME")
	}
	switch {
	case len(args) > 1:
		return mcpconfig.Server{}, mcpUsageError(cmd, "give one server, NAME or URL; got %d arguments", len(args))
	case len(args) == 1 && f.server != "" && f.server != args[0]:
		return mcpconfig.Server{}, mcpUsageError(cmd, "give the server once: as the argument or as --server")
	case len(args) == 1:
		f.server = args[0]
	case f.server == "":
		return mcpconfig.Server{}, mcpUsageError(cmd, "which server? give its URL or its NAME in --config")
	}
	cfg, err := resolveServer(cmd, f, nil, cmdLogger(cmd, cmd.ErrOrStderr(), slog.LevelInfo))
	if err != nil {
		return cfg, mcpUsageError(cmd, "%v", err)
	}
	if !cfg.IsHTTP() {
		return cfg, mcpUsageError(cmd, "server %s is a stdio command; only HTTP servers log in", cfg.Name)
	}
	return cfg, nil
}

// chatOAuth is the OAuth of the chat: stored logins are used (and
// refreshed) silently, but the chat never opens a browser on its own; a
// server that needs a login fails with a *oauth.LoginRequiredError
// that names the command to run.
func chatOAuth(dir, config string) mcpclient.ConnectOption {
	return mcpclient.WithOAuth(&oauth.Options{
		Store: oauth.NewTokenStore(dir),
		LoginHint: func(s mcpconfig.Server) string {
			if config != "" && s.Name != s.URL {
				if servers, err := mcpconfig.Load(config, &mcpconfig.LoadOptions{LookupEnv: os.LookupEnv}); err == nil {
					for _, c := range servers {
						if c.Name == s.Name {
							return loginHint(s, config)
						}
					}
				}
			}
			return loginHint(s, "")
		},
	})
}

// chatConfigPath is the config file the chat reads, "" when none.
func chatConfigPath(f *chatFlags) string {
	if f.config != "" {
		return f.config
	}
	if _, err := os.Stat(defaultConfigFile); err == nil {
		return defaultConfigFile
	}
	return ""
}
