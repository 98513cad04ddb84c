-- perpdex_venue_stats of one date, from the stored account and position snapshots:
-- one row per hour with an account snapshot. Each wallet counts once per hour, at its
-- latest account snapshot in the hour; its positions are those of that same snapshot
-- (a clearinghouseState answer gives both with one time). Equity counts wallets with
-- a positive account value. Figures in USD are rounded to cents, as the venue's own.
-- The positions placeholder (below) is the date's positions file, or an empty relation when it has none.
WITH acc AS (
    SELECT date_trunc('hour', snapshot_ts) AS ts, wallet,
           arg_max(account_value, snapshot_ts) AS av, max(snapshot_ts) AS at
    FROM read_parquet(?)
    GROUP BY 1, 2
),
pos AS (
    SELECT acc.ts, p.szi, p.unrealized_pnl, p.position_value
    FROM {{positions}} p
    JOIN acc ON p.wallet = acc.wallet AND p.snapshot_ts = acc.at
),
eq AS (
    SELECT ts, round(coalesce(sum(av) FILTER (WHERE av > 0), 0), 2) AS total_perp_equity,
           count(*) FILTER (WHERE av > 0) AS count_wallets
    FROM acc GROUP BY ts
),
oi AS (
    SELECT ts, count(*) AS count_open_positions,
           count(*) FILTER (WHERE szi > 0) AS count_long,
           count(*) FILTER (WHERE szi < 0) AS count_short,
           round(sum(position_value), 2) AS open_interest,
           round(coalesce(sum(position_value) FILTER (WHERE szi > 0), 0), 2) AS open_interest_long,
           round(coalesce(sum(position_value) FILTER (WHERE szi < 0), 0), 2) AS open_interest_short,
           count(*) FILTER (WHERE unrealized_pnl > 0) AS count_positions_in_profit
    FROM pos GROUP BY ts
)
SELECT eq.ts, eq.total_perp_equity, eq.count_wallets,
       coalesce(oi.count_open_positions, 0) AS count_open_positions,
       coalesce(oi.count_long, 0) AS count_long,
       coalesce(oi.count_short, 0) AS count_short,
       coalesce(oi.open_interest, 0) AS open_interest,
       coalesce(oi.open_interest_long, 0) AS open_interest_long,
       coalesce(oi.open_interest_short, 0) AS open_interest_short,
       coalesce(oi.count_positions_in_profit, 0) AS count_positions_in_profit
FROM eq LEFT JOIN oi USING (ts)
