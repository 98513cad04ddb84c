-- PredmktMarketHolders returns the top holders of each outcome token of one market by
-- net shares (buys minus sells over every fill, taker and maker, with ts <= now), with
-- each token's holder count and shares held repeated on its rows.
-- $1 condition_id, $2 now (epoch ms), $3 holders per token.
-- Shares and USD are summed as integer micro-units; only positive net positions hold.
WITH pos AS (
    SELECT token_id, wallet,
           CAST(sum(CASE WHEN side = 'BUY' THEN round(size * 1e6) ELSE -round(size * 1e6) END) AS BIGINT) AS net,
           CAST(coalesce(sum(round(usd * 1e6)) FILTER (WHERE side = 'BUY'), 0) AS BIGINT)  AS buy_usd,
           CAST(coalesce(sum(round(size * 1e6)) FILTER (WHERE side = 'BUY'), 0) AS BIGINT) AS buy_sh,
           count(*) AS n, max(ts) AS last_ts
    FROM predmkt_trades
    WHERE condition_id = $1 AND ts <= $2
    GROUP BY token_id, wallet
), held AS (
    SELECT *, row_number() OVER (PARTITION BY token_id ORDER BY net DESC, wallet) AS rk,
           count(*) OVER (PARTITION BY token_id) AS holders,
           CAST(sum(net) OVER (PARTITION BY token_id) AS BIGINT) AS total
    FROM pos WHERE net > 0
)
SELECT h.token_id, h.rk, h.wallet, coalesce(p.pseudonym, ''), coalesce(p.display_name, ''),
       h.net, h.buy_usd, h.buy_sh, h.n, h.last_ts, h.holders, h.total
FROM held h
LEFT JOIN predmkt_profiles p ON p.wallet = h.wallet
WHERE h.rk <= $3
ORDER BY h.token_id, h.rk;
