-- PerpdexVaults returns each vault's metadata and figures, as of the store clock.
-- $1 one vault address, or NULL for every vault; $2 the clock; $3, $4, $5 the starts
-- of the 1d, 7d and 30d windows; $6 the start of the requested window. Windows are
-- [start, $2]; nothing after $2 counts. PnL is fills' closed_pnl minus fee plus
-- funding payments; money is summed as integer micro-USD, so a figure never depends
-- on summation order.
WITH v AS (
    SELECT * FROM perpdex_vaults WHERE $1::VARCHAR IS NULL OR vault = $1::VARCHAR
), f AS (
    SELECT wallet, time,
           CAST(round(closed_pnl * 1e6) AS BIGINT) - CAST(round(fee * 1e6) AS BIGINT) AS pnl,
           CAST(round(px * sz * 1e6) AS BIGINT)                                       AS ntl,
           crossed
    FROM perpdex_fills
    WHERE wallet IN (SELECT vault FROM v) AND time <= $2::TIMESTAMP
), p AS (
    SELECT wallet, time, pnl FROM f
    UNION ALL
    SELECT wallet, time, CAST(round(usdc * 1e6) AS BIGINT)
    FROM perpdex_funding
    WHERE wallet IN (SELECT vault FROM v) AND time <= $2::TIMESTAMP
), pn AS (
    SELECT wallet,
           CAST(coalesce(sum(pnl) FILTER (WHERE time >= $3::TIMESTAMP), 0) AS BIGINT) AS pnl_1d,
           CAST(coalesce(sum(pnl) FILTER (WHERE time >= $4::TIMESTAMP), 0) AS BIGINT) AS pnl_7d,
           CAST(coalesce(sum(pnl) FILTER (WHERE time >= $5::TIMESTAMP), 0) AS BIGINT) AS pnl_30d,
           CAST(coalesce(sum(pnl), 0) AS BIGINT)                                        AS pnl_all,
           min(time)                                                                    AS first_ts
    FROM p GROUP BY wallet
), fw AS (
    SELECT wallet,
           CAST(sum(ntl) AS BIGINT)                         AS vol,
           CAST(coalesce(sum(ntl) FILTER (WHERE NOT crossed), 0) AS BIGINT) AS maker_vol,
           count(*)                                         AS fills,
           max(time)                                        AS last_fill
    FROM f WHERE time >= $6::TIMESTAMP GROUP BY wallet
), a AS (
    SELECT wallet,
           arg_max(account_value, snapshot_ts)                                                          AS av,
           max(snapshot_ts)                                                                             AS av_ts,
           CAST(coalesce(sum(CAST(round(account_value * 1e6) AS BIGINT)) FILTER (WHERE snapshot_ts >= $6::TIMESTAMP), 0) AS BIGINT) AS av_sum,
           count(*) FILTER (WHERE snapshot_ts >= $6::TIMESTAMP)                                         AS av_n
    FROM perpdex_accounts
    WHERE wallet IN (SELECT vault FROM v) AND snapshot_ts <= $2::TIMESTAMP
    GROUP BY wallet
)
SELECT v.vault, v.name, v.kind, v.leader, v.created_ts, v.description,
       a.av, a.av_ts, coalesce(a.av_sum, 0), coalesce(a.av_n, 0),
       coalesce(pn.pnl_1d, 0), coalesce(pn.pnl_7d, 0), coalesce(pn.pnl_30d, 0), coalesce(pn.pnl_all, 0), pn.first_ts,
       coalesce(fw.vol, 0), coalesce(fw.maker_vol, 0), coalesce(fw.fills, 0), fw.last_fill
FROM v
LEFT JOIN pn ON pn.wallet = v.vault
LEFT JOIN fw ON fw.wallet = v.vault
LEFT JOIN a  ON a.wallet = v.vault
ORDER BY v.vault;
