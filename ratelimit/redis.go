package ratelimit

import (
	"context"
	"fmt"
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

// reserveScript is Reserve in one atomic step on the server: sum the window's fields,
// grant what fits, add it to the second's field, return the grant and the hash.
var reserveScript = redis.NewScript(`
local h = redis.call('HGETALL', KEYS[1])
local since = tonumber(ARGV[1])
local used = 0
for i = 1, #h, 2 do
  local s = tonumber(h[i])
  if s and s > since then used = used + tonumber(h[i + 1]) end
end
local g = math.min(tonumber(ARGV[3]), tonumber(ARGV[4]) - used)
if g > 0 then
  redis.call('HINCRBY', KEYS[1], ARGV[2], g)
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
  h = redis.call('HGETALL', KEYS[1])
else
  g = 0
end
return {g, h}
`)

// Reserve implements Counters.
func (r *RedisCounters) Reserve(ctx context.Context, key string, sec, since, n, capacity int64) (int64, []Bucket, error) {
	res, err := reserveScript.Run(ctx, r.c, []string{r.prefix + key}, since, sec, n, capacity, int64(2*Window/time.Second)).Slice()
	if err != nil {
		return 0, nil, err
	}
	if len(res) != 2 {
		return 0, nil, fmt.Errorf("reserve: unexpected reply %v", res)
	}
	granted, _ := res[0].(int64)
	fields, _ := res[1].([]any)
	var bs []Bucket
	for i := 0; i+1 < len(fields); i += 2 {
		f, _ := fields[i].(string)
		v, _ := fields[i+1].(string)
		s, err1 := strconv.ParseInt(f, 10, 64)
		c, err2 := strconv.ParseInt(v, 10, 64)
		if err1 == nil && err2 == nil && s > since {
			bs = append(bs, Bucket{Sec: s, N: c})
		}
	}
	sort.Slice(bs, func(a, b int) bool { return bs[a].Sec < bs[b].Sec })
	return granted, bs, nil
}

// Peers implements Counters: a sorted set of process ids scored by last sync.
func (r *RedisCounters) Peers(ctx context.Context, id string, now int64) (int, error) {
	k := r.prefix + "processes"
	var card *redis.IntCmd
	_, err := r.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, k, redis.Z{Score: float64(now), Member: id})
		p.ZRemRangeByScore(ctx, k, "-inf", "("+strconv.FormatInt(now-peerTTL, 10))
		card = p.ZCard(ctx, k)
		p.Expire(ctx, k, time.Hour)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return int(card.Val()), nil
}
