package ratelimit

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the SQLite driver (pure Go)
)

//go:embed schema.sql
var schemaSQL string

// DBFile is the credential store's file inside the lake directory.
const DBFile = "access.db"

// Credential prefixes: an API key is mdq_<id>_<secret>, a self-issued OAuth access
// token mdqt_<id>_<secret>. The id finds the row; the whole string's SHA-256 is what
// is stored and compared.
const (
	keyPrefix   = "mdq_"
	tokenPrefix = "mdqt_"
)

// Principal kinds.
const (
	KindAPIKey = "api_key"
	KindOAuth  = "oauth"
)

// authCacheTTL bounds how long a valid credential is trusted without a store read: a
// revocation takes effect within this time in every process.
const authCacheTTL = 5 * time.Second

// Store is the SQLite credential store of one lake: users, API keys and OAuth access
// tokens (hashes only), the shared budget counters, credits and archive downloads.
type Store struct {
	dbp  atomic.Pointer[sql.DB] // swapped when access.db is replaced on disk (CheckFile)
	path string
	file os.FileInfo // the access.db the handle has open (its inode)
	fmu  sync.Mutex  // serialises CheckFile
	now  func() time.Time
	jwt  *JWTVerifier

	mu    sync.RWMutex
	cache map[[32]byte]cachedPrincipal
}

type cachedPrincipal struct {
	p     Principal
	until time.Time
}

// Open opens (creating when needed) the store at dir/access.db in WAL mode.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, DBFile)
	db, fi, err := openDB(path)
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, file: fi, now: time.Now, cache: map[[32]byte]cachedPrincipal{}}
	s.dbp.Store(db)
	return s, nil
}

func openDB(path string) (*sql.DB, os.FileInfo, error) {
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(4)
	if _, err := db.Exec(schemaSQL); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("credential store %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, fi, nil
}

// db is the current handle.
func (s *Store) db() *sql.DB { return s.dbp.Load() }

// CheckFile notices access.db deleted or replaced on disk (another inode at its path)
// while this process holds the old one open: without it, keys created since answer
// 401 and revocations are written where no one reads them. The old handle is closed
// (which checkpoints into the old file and removes its WAL) and the file at the path
// opened, created empty when it is gone. It reports whether it reopened.
func (s *Store) CheckFile() (bool, error) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	fi, err := os.Stat(s.path)
	if err == nil && os.SameFile(fi, s.file) {
		return false, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	s.db().Close()
	db, fi, err := openDB(s.path)
	if err != nil {
		return false, err
	}
	s.dbp.Store(db)
	s.file = fi
	s.mu.Lock()
	clear(s.cache) // credentials of the old file are not trusted any longer
	s.mu.Unlock()
	return true, nil
}

// Watch runs CheckFile every interval until ctx ends, logging loudly when access.db
// was deleted or replaced (keys of the deleted file no longer authenticate).
func (s *Store) Watch(ctx context.Context, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			reopened, err := s.CheckFile()
			switch {
			case err != nil:
				log.Error("credential store: access.db cannot be checked or reopened", "path", s.path, "err", err.Error())
			case reopened:
				log.Error("credential store: access.db was deleted or replaced on disk; reopened the file now at the path (keys of the old file no longer work)", "path", s.path)
			}
		}
	}
}

// Close closes the database.
func (s *Store) Close() error { return s.db().Close() }

// SetClock replaces the store's clock (tests).
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// SetJWTVerifier makes the store accept JWT bearer tokens from an external issuer.
func (s *Store) SetJWTVerifier(v *JWTVerifier) { s.jwt = v }

var userRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$`)

// EnsureUser creates the user when it does not exist.
func (s *Store) EnsureUser(ctx context.Context, name string) error {
	if !userRe.MatchString(name) {
		return fmt.Errorf("user %q: use letters, digits and . _ @ + - (at most 128)", name)
	}
	_, err := s.db().ExecContext(ctx, `INSERT INTO users(name, created_at) VALUES(?, ?) ON CONFLICT(name) DO NOTHING`,
		name, s.now().Unix())
	return err
}

// KeyInfo describes an API key (never its secret).
type KeyInfo struct {
	ID        string
	User      string
	Label     string
	CreatedAt time.Time
	RevokedAt *time.Time
}

// TokenInfo describes an OAuth access token (never its secret).
type TokenInfo struct {
	ID        string
	User      string
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt *time.Time
}

func newSecret(prefix string) (id, secret string, err error) {
	var idb [6]byte
	var sb [32]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return "", "", err
	}
	if _, err := rand.Read(sb[:]); err != nil {
		return "", "", err
	}
	id = hex.EncodeToString(idb[:])
	return id, prefix + id + "_" + base64.RawURLEncoding.EncodeToString(sb[:]), nil
}

func hashSecret(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// CreateKey creates an API key for user (creating the user when needed) and returns
// its id and the key itself, which is shown once and never stored.
func (s *Store) CreateKey(ctx context.Context, user, label string) (KeyInfo, string, error) {
	if err := s.EnsureUser(ctx, user); err != nil {
		return KeyInfo{}, "", err
	}
	id, key, err := newSecret(keyPrefix)
	if err != nil {
		return KeyInfo{}, "", err
	}
	h := hashSecret(key)
	now := s.now().UTC().Truncate(time.Second)
	if _, err := s.db().ExecContext(ctx, `INSERT INTO api_keys(id, user, label, hash, created_at) VALUES(?, ?, ?, ?, ?)`,
		id, user, label, h[:], now.Unix()); err != nil {
		return KeyInfo{}, "", err
	}
	return KeyInfo{ID: id, User: user, Label: label, CreatedAt: now}, key, nil
}

// ListKeys lists API keys, of one user when user is not empty.
func (s *Store) ListKeys(ctx context.Context, user string) ([]KeyInfo, error) {
	rows, err := s.db().QueryContext(ctx, `SELECT id, user, label, created_at, revoked_at FROM api_keys
		WHERE ? = '' OR user = ? ORDER BY created_at, id`, user, user)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []KeyInfo
	for rows.Next() {
		var k KeyInfo
		var created int64
		var revoked sql.NullInt64
		if err := rows.Scan(&k.ID, &k.User, &k.Label, &created, &revoked); err != nil {
			return nil, err
		}
		k.CreatedAt = time.Unix(created, 0).UTC()
		if revoked.Valid {
			t := time.Unix(revoked.Int64, 0).UTC()
			k.RevokedAt = &t
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// ErrNotFound reports an id that names no key or token.
var ErrNotFound = errors.New("not found")

// RevokeKey revokes an API key by id.
func (s *Store) RevokeKey(ctx context.Context, id string) error {
	return s.revoke(ctx, "api_keys", id)
}

// RevokeToken revokes an OAuth access token by id.
func (s *Store) RevokeToken(ctx context.Context, id string) error {
	return s.revoke(ctx, "oauth_tokens", id)
}

func (s *Store) revoke(ctx context.Context, table, id string) error {
	// table is one of two constants above, never input.
	res, err := s.db().ExecContext(ctx, `UPDATE `+table+` SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, s.now().Unix(), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var one int
		if err := s.db().QueryRowContext(ctx, `SELECT 1 FROM `+table+` WHERE id = ?`, id).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", id, ErrNotFound)
		}
	}
	s.mu.Lock()
	clear(s.cache)
	s.mu.Unlock()
	return nil
}

// IssueToken issues a self-hosted OAuth access token for user, valid for ttl.
func (s *Store) IssueToken(ctx context.Context, user string, ttl time.Duration) (TokenInfo, string, error) {
	if ttl <= 0 {
		return TokenInfo{}, "", errors.New("token ttl must be positive")
	}
	if err := s.EnsureUser(ctx, user); err != nil {
		return TokenInfo{}, "", err
	}
	id, tok, err := newSecret(tokenPrefix)
	if err != nil {
		return TokenInfo{}, "", err
	}
	h := hashSecret(tok)
	now := s.now().UTC().Truncate(time.Second)
	exp := now.Add(ttl)
	if _, err := s.db().ExecContext(ctx, `INSERT INTO oauth_tokens(id, user, hash, created_at, expires_at) VALUES(?, ?, ?, ?, ?)`,
		id, user, h[:], now.Unix(), exp.Unix()); err != nil {
		return TokenInfo{}, "", err
	}
	return TokenInfo{ID: id, User: user, CreatedAt: now, ExpiresAt: exp}, tok, nil
}

// ListTokens lists self-issued access tokens, of one user when user is not empty.
func (s *Store) ListTokens(ctx context.Context, user string) ([]TokenInfo, error) {
	rows, err := s.db().QueryContext(ctx, `SELECT id, user, created_at, expires_at, revoked_at FROM oauth_tokens
		WHERE ? = '' OR user = ? ORDER BY created_at, id`, user, user)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TokenInfo
	for rows.Next() {
		var t TokenInfo
		var created, exp int64
		var revoked sql.NullInt64
		if err := rows.Scan(&t.ID, &t.User, &created, &exp, &revoked); err != nil {
			return nil, err
		}
		t.CreatedAt, t.ExpiresAt = time.Unix(created, 0).UTC(), time.Unix(exp, 0).UTC()
		if revoked.Valid {
			r := time.Unix(revoked.Int64, 0).UTC()
			t.RevokedAt = &r
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Authenticate checks an API key and/or a bearer token. Either alone is enough: when
// both are sent, a valid API key wins and an invalid one falls back to the bearer.
// Failures wrap ErrInvalidCredential; any other error is a store failure.
func (s *Store) Authenticate(ctx context.Context, apiKey, bearer string) (Principal, error) {
	if apiKey != "" {
		p, err := s.authSecret(ctx, apiKey, keyPrefix)
		if err == nil || !errors.Is(err, ErrInvalidCredential) || bearer == "" {
			return p, err
		}
	}
	if bearer == "" {
		return Principal{}, fmt.Errorf("%w: no credential", ErrInvalidCredential)
	}
	if strings.HasPrefix(bearer, tokenPrefix) {
		return s.authSecret(ctx, bearer, tokenPrefix)
	}
	if s.jwt != nil && strings.Count(bearer, ".") == 2 {
		return s.jwt.Verify(ctx, bearer)
	}
	return Principal{}, fmt.Errorf("%w: unrecognised bearer token", ErrInvalidCredential)
}

// authSecret checks an mdq_ key or mdqt_ token: the id finds the row, the hashes are
// compared in constant time, and a hit is cached for authCacheTTL.
func (s *Store) authSecret(ctx context.Context, secret, prefix string) (Principal, error) {
	h := hashSecret(secret)
	now := s.now()
	s.mu.RLock()
	c, ok := s.cache[h]
	s.mu.RUnlock()
	if ok && now.Before(c.until) {
		return c.p, nil
	}
	rest, ok := strings.CutPrefix(secret, prefix)
	id, _, ok2 := strings.Cut(rest, "_")
	if !ok || !ok2 || len(id) != 12 {
		return Principal{}, fmt.Errorf("%w: malformed", ErrInvalidCredential)
	}
	var (
		user    string
		stored  []byte
		revoked sql.NullInt64
		exp     sql.NullInt64
		kind    string
		err     error
	)
	if prefix == keyPrefix {
		kind = KindAPIKey
		err = s.db().QueryRowContext(ctx, `SELECT user, hash, revoked_at FROM api_keys WHERE id = ?`, id).Scan(&user, &stored, &revoked)
	} else {
		kind = KindOAuth
		err = s.db().QueryRowContext(ctx, `SELECT user, hash, revoked_at, expires_at FROM oauth_tokens WHERE id = ?`, id).Scan(&user, &stored, &revoked, &exp)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, fmt.Errorf("%w: unknown", ErrInvalidCredential)
	}
	if err != nil {
		return Principal{}, err
	}
	if subtle.ConstantTimeCompare(stored, h[:]) != 1 {
		return Principal{}, fmt.Errorf("%w: unknown", ErrInvalidCredential)
	}
	if revoked.Valid {
		return Principal{}, fmt.Errorf("%w: revoked", ErrInvalidCredential)
	}
	until := now.Add(authCacheTTL)
	if exp.Valid {
		e := time.Unix(exp.Int64, 0)
		if !now.Before(e) {
			return Principal{}, fmt.Errorf("%w: expired", ErrInvalidCredential)
		}
		if e.Before(until) {
			until = e
		}
	}
	p := Principal{CredentialID: id, Kind: kind, User: user}
	s.remember(h, p, until)
	return p, nil
}

func (s *Store) remember(h [32]byte, p Principal, until time.Time) {
	s.mu.Lock()
	if len(s.cache) >= 100_000 {
		clear(s.cache)
	}
	s.cache[h] = cachedPrincipal{p: p, until: until}
	s.mu.Unlock()
}

// DB exposes the handle to the counter store and tests.
func (s *Store) DB() *sql.DB { return s.db() }
