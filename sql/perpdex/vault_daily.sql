-- PerpdexVaultDaily returns one vault's figures per UTC date with activity in [$2, $3]:
-- PnL (closed_pnl - fee + funding) and fill volume in integer micro-USD, fills, and
-- the account value of the day's last snapshot (NULL on a date without one).
-- $1 vault, $2 window start, $3 the store clock.
WITH p AS (
    SELECT CAST(time AS DATE) AS d,
           CAST(round(closed_pnl * 1e6) AS BIGINT) - CAST(round(fee * 1e6) AS BIGINT) AS pnl,
           CAST(round(px * sz * 1e6) AS BIGINT) AS ntl, 1 AS n
    FROM perpdex_fills
    WHERE wallet = $1 AND time >= $2::TIMESTAMP AND time <= $3::TIMESTAMP
    UNION ALL
    SELECT CAST(time AS DATE), CAST(round(usdc * 1e6) AS BIGINT), 0, 0
    FROM perpdex_funding
    WHERE wallet = $1 AND time >= $2::TIMESTAMP AND time <= $3::TIMESTAMP
), pd AS (
    SELECT d, CAST(sum(pnl) AS BIGINT) AS pnl, CAST(sum(ntl) AS BIGINT) AS ntl, CAST(sum(n) AS BIGINT) AS n
    FROM p GROUP BY d
), ad AS (
    SELECT CAST(snapshot_ts AS DATE) AS d, arg_max(account_value, snapshot_ts) AS av
    FROM perpdex_accounts
    WHERE wallet = $1 AND snapshot_ts >= $2::TIMESTAMP AND snapshot_ts <= $3::TIMESTAMP
    GROUP BY 1
)
SELECT coalesce(pd.d, ad.d) AS d, coalesce(pd.pnl, 0), coalesce(pd.ntl, 0), coalesce(pd.n, 0), ad.av
FROM pd FULL OUTER JOIN ad ON ad.d = pd.d
ORDER BY d;
