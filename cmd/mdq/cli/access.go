package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"mdq/archive"
	"mdq/handlers"
	"mdq/ratelimit"
)

// The API's consumer-side interfaces, satisfied by package ratelimit.
var (
	_ handlers.Authenticator = (*ratelimit.Store)(nil)
	_ handlers.Budget        = (*ratelimit.Limiter)(nil)
	_ handlers.UsageReporter = (*ratelimit.Limiter)(nil)
	_ ratelimit.Counters     = (*ratelimit.RedisCounters)(nil)
	_ ratelimit.Counters     = (*ratelimit.SQLiteCounters)(nil)
	_ ratelimit.Ledger       = (*ratelimit.Store)(nil)
)

func init() {
	extraCommands = append(extraCommands, newKeysCmd, newTokensCmd, newDevKeyCmd)
	serveFlagHooks = append(serveFlagHooks, accessFlags)
	serveHooks = append(serveHooks, accessHook)
}

// syncInterval is how often each serve process merges its budget counts into the
// shared store (SQLite or Redis) and reads the other processes' counts.
const syncInterval = time.Second

// storeCheckInterval is how often serve checks that access.db is still the file it has
// open (deleted or replaced: reopened).
const storeCheckInterval = 2 * time.Second

// archiveRefreshInterval is how often serve checks whether the archive changed and
// regenerates manifest.json and the samples.
const archiveRefreshInterval = time.Minute

func accessFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Int("hourly-limit", ratelimit.DefaultHourlyLimit, "requests per rolling hour per credential (SPEC: 20000)")
	f.String("oauth-issuer", "", "accept JWT bearer tokens from this OAuth 2.1 issuer (exact iss claim)")
	f.String("oauth-jwks-url", "", "the issuer's JWKS URL (with --oauth-issuer)")
	f.String("oauth-audience", "mdq", "audience the JWTs must name in aud")
	f.String("ratelimit-redis", "", "share the budget across machines through Redis (redis://host:port/db); default: the lake's SQLite")
	f.Float64("archive-bandwidth", float64(archive.DefaultBandwidth)/1e6, "archive bandwidth ceiling per connection in MB/s (0: none)")
	f.Bool("no-auth", false, "serve every route without credentials or budget (local analysis only)")
}

// accessHook wires credentials, the budget and the archive into the API.
func accessHook(ctx context.Context, cfg *Config, cmd *cobra.Command, api *handlers.API) (func(), error) {
	fl := cmd.Flags()
	noAuth, _ := fl.GetBool("no-auth")
	limit, _ := fl.GetInt("hourly-limit")
	issuer, _ := fl.GetString("oauth-issuer")
	jwks, _ := fl.GetString("oauth-jwks-url")
	aud, _ := fl.GetString("oauth-audience")
	redisURL, _ := fl.GetString("ratelimit-redis")
	bw, _ := fl.GetFloat64("archive-bandwidth")
	if limit <= 0 {
		return nil, fmt.Errorf("--hourly-limit must be positive")
	}
	if bw < 0 {
		return nil, fmt.Errorf("--archive-bandwidth must be 0 or more")
	}
	if (issuer == "") != (jwks == "") {
		return nil, fmt.Errorf("--oauth-issuer and --oauth-jwks-url go together")
	}
	log := api.Log
	if log == nil {
		log = slog.Default()
	}
	var cleanups []func()
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	bg, cancel := context.WithCancel(context.Background())
	cleanups = append(cleanups, cancel)

	// The archive: refresh manifest and samples now when stale, then every minute.
	dir := archive.Root(cfg.Data)
	if err := archive.Refresh(ctx, cfg.Data); err != nil {
		log.Warn("archive refresh", "err", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(archiveRefreshInterval)
		defer t.Stop()
		for {
			select {
			case <-bg.Done():
				return
			case <-t.C:
				if err := archive.Refresh(bg, cfg.Data); err != nil && bg.Err() == nil {
					log.Warn("archive refresh", "err", err)
				}
			}
		}
	}()
	cleanups = append(cleanups, func() { cancel(); <-done })
	aopt := archive.Options{Dir: dir, Bandwidth: int64(bw * 1e6), Principal: func(r *http.Request) (ratelimit.Principal, bool) {
		return handlers.PrincipalFrom(r.Context())
	}, Log: log}

	if noAuth {
		api.Mounts = append(api.Mounts, handlers.Mount{Prefix: "/archive/", Handler: archive.Handler(aopt)})
		log.Warn("serving without credentials (--no-auth)")
		return cleanup, nil
	}

	// Credentials.
	store, err := ratelimit.Open(cfg.Data)
	if err != nil {
		cleanup()
		return nil, err
	}
	cleanups = append(cleanups, func() { store.Close() })
	watchDone := make(chan struct{})
	go func() { defer close(watchDone); store.Watch(bg, storeCheckInterval, log) }()
	cleanups = append(cleanups, func() { cancel(); <-watchDone })
	if issuer != "" {
		store.SetJWTVerifier(ratelimit.NewJWTVerifier(issuer, aud, jwks))
		api.Issuer = issuer // published by /.well-known/oauth-protected-resource
	}

	// The budget: SQLite on this machine, or Redis across machines.
	var counters ratelimit.Counters = store.Counters()
	if redisURL != "" {
		rc, err := ratelimit.NewRedisCounters(ctx, redisURL)
		if err != nil {
			cleanup()
			return nil, fmt.Errorf("--ratelimit-redis: %w", err)
		}
		counters = rc
		cleanups = append(cleanups, func() { rc.Close() })
	}
	lim := ratelimit.NewLimiter(counters, store, limit)
	lim.Log = log
	syncDone := make(chan struct{})
	go func() { defer close(syncDone); lim.Run(bg, syncInterval) }()
	// Runs before the store closes: the final sync writes the last counts.
	cleanups = append(cleanups, func() { cancel(); <-syncDone })

	api.Auth = store
	api.Budget = lim
	aopt.Recorder = lim
	api.Mounts = append(api.Mounts, handlers.Mount{Prefix: "/archive/", Handler: archive.Handler(aopt), Auth: true, Public: archive.IsPublic})
	return cleanup, nil
}

func openStore(cfg *Config) (*ratelimit.Store, error) { return ratelimit.Open(cfg.Data) }

func newKeysCmd(cfg *Config) *cobra.Command {
	keys := &cobra.Command{Use: "keys", Short: "Create, list and revoke API keys (stored as SHA-256 hashes)"}
	var user, label string
	create := &cobra.Command{
		Use: "create", Short: "Create an API key; it is printed once, as the last line of stdout", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := openStore(cfg)
			if err != nil {
				return err
			}
			defer s.Close()
			info, key, err := s.CreateKey(cmd.Context(), user, label)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "created API key %s for user %s; it is shown once, keep it:\n", info.ID, info.User)
			fmt.Fprintln(out, key)
			return nil
		},
	}
	create.Flags().StringVar(&user, "user", "", "user the key belongs to (created when new)")
	create.Flags().StringVar(&label, "name", "", "label")
	create.MarkFlagRequired("user") //nolint:errcheck
	var listUser string
	list := &cobra.Command{
		Use: "list", Short: "List API keys (never their secrets)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := openStore(cfg)
			if err != nil {
				return err
			}
			defer s.Close()
			ks, err := s.ListKeys(cmd.Context(), listUser)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tUSER\tNAME\tCREATED\tREVOKED")
			for _, k := range ks {
				rev := "-"
				if k.RevokedAt != nil {
					rev = k.RevokedAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.ID, k.User, k.Label, k.CreatedAt.Format(time.RFC3339), rev)
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVar(&listUser, "user", "", "only this user's keys")
	revoke := &cobra.Command{
		Use: "revoke ID", Short: "Revoke an API key (every process stops accepting it within 5 s)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openStore(cfg)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := s.RevokeKey(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked API key %s\n", args[0])
			return nil
		},
	}
	keys.AddCommand(create, list, revoke)
	return keys
}

func newTokensCmd(cfg *Config) *cobra.Command {
	tokens := &cobra.Command{Use: "tokens", Short: "Issue, list and revoke OAuth access tokens (self-hosted issuer)"}
	var user string
	var ttl time.Duration
	issue := &cobra.Command{
		Use: "issue", Short: "Issue an access token; it is printed once, as the last line of stdout", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := openStore(cfg)
			if err != nil {
				return err
			}
			defer s.Close()
			info, tok, err := s.IssueToken(cmd.Context(), user, ttl)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "issued access token %s for user %s, expires %s; send it as Authorization: Bearer:\n",
				info.ID, info.User, info.ExpiresAt.Format(time.RFC3339))
			fmt.Fprintln(out, tok)
			return nil
		},
	}
	issue.Flags().StringVar(&user, "user", "", "user the token stands for (created when new)")
	issue.Flags().DurationVar(&ttl, "ttl", time.Hour, "lifetime")
	issue.MarkFlagRequired("user") //nolint:errcheck
	var listUser string
	list := &cobra.Command{
		Use: "list", Short: "List self-issued access tokens", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := openStore(cfg)
			if err != nil {
				return err
			}
			defer s.Close()
			ts, err := s.ListTokens(cmd.Context(), listUser)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tUSER\tCREATED\tEXPIRES\tREVOKED")
			for _, t := range ts {
				rev := "-"
				if t.RevokedAt != nil {
					rev = t.RevokedAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.User, t.CreatedAt.Format(time.RFC3339), t.ExpiresAt.Format(time.RFC3339), rev)
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVar(&listUser, "user", "", "only this user's tokens")
	revoke := &cobra.Command{
		Use: "revoke ID", Short: "Revoke an access token", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openStore(cfg)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := s.RevokeToken(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked access token %s\n", args[0])
			return nil
		},
	}
	tokens.AddCommand(issue, list, revoke)
	return tokens
}

// devUser and devLabel name the development key that `make run` prints.
const (
	devUser  = "dev"
	devLabel = "dev-key"
)

// newDevKeyCmd prints a new development key the first time, and leaves a valid one
// alone afterwards: a second `make run` must not revoke the key a running server's
// clients hold. mdq keeps no key in clear (access.db holds hashes only), so a key can be
// printed only when it is created; a user who lost it asks for --new, which creates
// one and then revokes the earlier dev keys.
func newDevKeyCmd(cfg *Config) *cobra.Command {
	var fresh bool
	cmd := &cobra.Command{
		Use: "dev-key", Short: "Create and print a development API key (user dev) unless a valid one exists; --new replaces it", Args: cobra.NoArgs,
		Long: "Creates and prints a development API key of user dev when none is valid. While one is valid it is left alone " +
			"(running `make run` twice does not invalidate a key in use) and only its id and creation time are shown: mdq stores " +
			"no key in clear, so a key is printed once, when it is created. --new creates a new key, prints it, and then revokes the earlier dev keys.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := openStore(cfg)
			if err != nil {
				return err
			}
			defer s.Close()
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			old, err := s.ListKeys(ctx, devUser)
			if err != nil {
				return err
			}
			if !fresh {
				for _, k := range old {
					if k.Label == devLabel && k.RevokedAt == nil {
						fmt.Fprintf(out, "development API key %s for user %s (created %s) is still valid and left alone; "+
							"it was printed when it was created (mdq keeps no key in clear). `mdq dev-key --new` replaces it.\n",
							k.ID, devUser, k.CreatedAt.UTC().Format(time.RFC3339))
						return nil
					}
				}
			}
			_, key, err := s.CreateKey(ctx, devUser, devLabel)
			if err != nil {
				return err
			}
			// Revoked only once the new key exists: no window without a key.
			for _, k := range old {
				if k.Label == devLabel && k.RevokedAt == nil {
					if err := s.RevokeKey(ctx, k.ID); err != nil {
						return err
					}
				}
			}
			fmt.Fprintf(out, "development API key for user %s (new; earlier dev keys revoked); send it as X-API-Key:\n", devUser)
			fmt.Fprintln(out, key)
			return nil
		},
	}
	cmd.Flags().BoolVar(&fresh, "new", false, "create a new key (printed) and revoke the earlier dev keys even when one is valid")
	return cmd
}
