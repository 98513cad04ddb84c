package ratelimit

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisCounters is the many-machine shared store: one Redis hash per budget key
// (mdq:budget:<key>, field = epoch second, value = count of every process), written
// with HINCRBY and read with HGETALL in one pipeline per Sync. Fields that left the
// window are deleted as they are read; a hash idle for two windows expires.
type RedisCounters struct {
	c      *redis.Client
	prefix string
}

// NewRedisCounters connects to url (redis://host:port/db).
func NewRedisCounters(ctx context.Context, url string) (*RedisCounters, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	c := redis.NewClient(opt)
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, err
	}
	return &RedisCounters{c: c, prefix: "mdq:budget:"}, nil
}

// Close closes the client.
func (r *RedisCounters) Close() error { return r.c.Close() }

// Sync implements Counters.
func (r *RedisCounters) Sync(ctx context.Context, push map[string][]Bucket, pull []string, since int64) (map[string][]Bucket, error) {
	if len(push) > 0 {
		_, err := r.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for k, bs := range push {
				for _, b := range bs {
					p.HIncrBy(ctx, r.prefix+k, strconv.FormatInt(b.Sec, 10), b.N)
				}
				p.Expire(ctx, r.prefix+k, 2*Window)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make(map[string][]Bucket, len(pull))
	if len(pull) == 0 {
		return out, nil
	}
	cmds := make([]*redis.MapStringStringCmd, len(pull))
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range pull {
			cmds[i] = p.HGetAll(ctx, r.prefix+k)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var stale []string
	for i, k := range pull {
		var bs []Bucket
		stale = stale[:0]
		for f, v := range cmds[i].Val() {
			sec, err1 := strconv.ParseInt(f, 10, 64)
			n, err2 := strconv.ParseInt(v, 10, 64)
			if err1 != nil || err2 != nil {
				continue
			}
			if sec <= since {
				stale = append(stale, f)
				continue
			}
			bs = append(bs, Bucket{Sec: sec, N: n})
		}
		sort.Slice(bs, func(a, b int) bool { return bs[a].Sec < bs[b].Sec })
		out[k] = bs
		if len(stale) > 0 {
			dctx, cancel := context.WithTimeout(ctx, time.Second)
			r.c.HDel(dctx, r.prefix+k, stale...) //nolint:errcheck // best-effort cleanup
			cancel()
		}
	}
	return out, nil
}
