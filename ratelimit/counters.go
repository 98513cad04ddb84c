package ratelimit

import (
	"context"
	"fmt"
	"sync/atomic"
)

// SQLiteCounters is the one-machine shared store: several mdq serve processes on one
// lake merge their counts into access.db. Each Sync is one short write transaction.
type SQLiteCounters struct {
	store *Store // its handle, read on each Sync: CheckFile may replace it
	syncs atomic.Int64
}

// Counters returns the store's budget counters.
func (s *Store) Counters() *SQLiteCounters { return &SQLiteCounters{store: s} }

// Close is a no-op: the Store owns the database.
func (c *SQLiteCounters) Close() error { return nil }

// Sync implements Counters.
func (c *SQLiteCounters) Sync(ctx context.Context, push map[string][]Bucket, pull []string, since int64) (map[string][]Bucket, error) {
	prune := c.syncs.Add(1)%60 == 1
	db := c.store.db()
	if len(push) > 0 || prune {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		defer tx.Rollback() //nolint:errcheck
		st, err := tx.PrepareContext(ctx, `INSERT INTO budget_counts(budget_key, sec, n) VALUES(?, ?, ?)
			ON CONFLICT(budget_key, sec) DO UPDATE SET n = n + excluded.n`)
		if err != nil {
			return nil, err
		}
		for k, bs := range push {
			for _, b := range bs {
				if _, err := st.ExecContext(ctx, k, b.Sec, b.N); err != nil {
					st.Close()
					return nil, fmt.Errorf("budget counts: %w", err)
				}
			}
		}
		st.Close()
		if prune {
			if _, err := tx.ExecContext(ctx, `DELETE FROM budget_counts WHERE sec <= ?`, since-60); err != nil {
				return nil, err
			}
		}
		if err := tx.Commit(); err != nil {
			return nil, err
		}
	}
	out := make(map[string][]Bucket, len(pull))
	if len(pull) == 0 {
		return out, nil
	}
	st, err := db.PrepareContext(ctx, `SELECT sec, n FROM budget_counts WHERE budget_key = ? AND sec > ? ORDER BY sec`)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	for _, k := range pull {
		rows, err := st.QueryContext(ctx, k, since)
		if err != nil {
			return nil, err
		}
		var bs []Bucket
		for rows.Next() {
			var b Bucket
			if err := rows.Scan(&b.Sec, &b.N); err != nil {
				rows.Close()
				return nil, err
			}
			bs = append(bs, b)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		out[k] = bs
	}
	return out, nil
}

// AddCredits implements Ledger.
func (s *Store) AddCredits(ctx context.Context, rows []CreditRow) error {
	tx, err := s.db().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck
	for _, r := range rows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO credits(credential_id, user, day, route, credits, calls) VALUES(?, ?, ?, ?, ?, ?)
			ON CONFLICT(credential_id, day, route) DO UPDATE SET credits = credits + excluded.credits, calls = calls + excluded.calls`,
			r.CredentialID, r.User, r.Day, r.Route, r.Credits, r.Calls); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// AddDownloads implements Ledger.
func (s *Store) AddDownloads(ctx context.Context, rows []Download) error {
	tx, err := s.db().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck
	for _, d := range rows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO archive_downloads(ts, credential_id, kind, user, path, bytes, range, status) VALUES(?, ?, ?, ?, ?, ?, ?, ?)`,
			d.Time.UnixMilli(), d.CredentialID, d.Kind, d.User, d.Path, d.Bytes, d.Range, d.Status); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Credits implements Ledger.
func (s *Store) Credits(ctx context.Context, credentialID, day string) (today, total int64, err error) {
	err = s.db().QueryRowContext(ctx, `SELECT COALESCE(SUM(CASE WHEN day = ? THEN credits END), 0), COALESCE(SUM(credits), 0)
		FROM credits WHERE credential_id = ?`, day, credentialID).Scan(&today, &total)
	return today, total, err
}

// Downloads returns the recorded archive downloads, newest last (operators, tests).
func (s *Store) Downloads(ctx context.Context) ([]Download, error) {
	rows, err := s.db().QueryContext(ctx, `SELECT credential_id, kind, user, path, bytes, range, status FROM archive_downloads ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Download
	for rows.Next() {
		var d Download
		if err := rows.Scan(&d.CredentialID, &d.Kind, &d.User, &d.Path, &d.Bytes, &d.Range, &d.Status); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// Reserve implements Counters in one write transaction (BEGIN IMMEDIATE: the
// connection string asks for it), so two processes cannot both see room for the same
// units.
func (c *SQLiteCounters) Reserve(ctx context.Context, key string, sec, since, n, capacity int64) (int64, []Bucket, error) {
	tx, err := c.store.db().BeginTx(ctx, nil)
	if err != nil {
		return 0, nil, err
	}
	defer tx.Rollback() //nolint:errcheck
	var used int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(n), 0) FROM budget_counts WHERE budget_key = ? AND sec > ?`,
		key, since).Scan(&used); err != nil {
		return 0, nil, err
	}
	granted := max(min(n, capacity-used), 0)
	if granted > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO budget_counts(budget_key, sec, n) VALUES(?, ?, ?)
			ON CONFLICT(budget_key, sec) DO UPDATE SET n = n + excluded.n`, key, sec, granted); err != nil {
			return 0, nil, err
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT sec, n FROM budget_counts WHERE budget_key = ? AND sec > ? ORDER BY sec`, key, since)
	if err != nil {
		return 0, nil, err
	}
	var bs []Bucket
	for rows.Next() {
		var b Bucket
		if err := rows.Scan(&b.Sec, &b.N); err != nil {
			rows.Close()
			return 0, nil, err
		}
		bs = append(bs, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, nil, err
	}
	return granted, bs, tx.Commit()
}

// Peers implements Counters.
func (c *SQLiteCounters) Peers(ctx context.Context, id string, now int64) (int, error) {
	tx, err := c.store.db().BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck
	if _, err := tx.ExecContext(ctx, `INSERT INTO budget_processes(id, seen) VALUES(?, ?)
		ON CONFLICT(id) DO UPDATE SET seen = excluded.seen`, id, now); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM budget_processes WHERE seen < ?`, now-peerTTL); err != nil {
		return 0, err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM budget_processes`).Scan(&n); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}
