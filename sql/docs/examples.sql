-- Ids the /docs examples run with, picked from the lake being served (its two newest
-- days): the busiest prediction-market token with its market and its busiest wallet,
-- the busiest perpetuals (wallet, coin), the largest open position of the newest
-- snapshot, the busiest Ethereum sender with its top (receiver, token), the address
-- with the most label sources and one with a primary ENS name. One row; a column is
-- NULL when its table is empty.
WITH pm_tok AS (
    SELECT token_id, any_value(condition_id) AS condition_id
    FROM predmkt_trades
    WHERE date IN (SELECT DISTINCT date FROM predmkt_trades ORDER BY date DESC LIMIT 2)
    GROUP BY token_id ORDER BY count(*) DESC, token_id LIMIT 1
), pm_wallet AS (
    SELECT wallet
    FROM predmkt_trades
    WHERE token_id = (SELECT token_id FROM pm_tok)
    GROUP BY wallet ORDER BY count(*) DESC, wallet LIMIT 1
), pd AS (
    SELECT wallet, coin
    FROM perpdex_fills
    WHERE date IN (SELECT DISTINCT date FROM perpdex_fills ORDER BY date DESC LIMIT 2)
    GROUP BY wallet, coin ORDER BY count(*) DESC, wallet, coin LIMIT 1
), pos AS (
    SELECT coin, CASE WHEN szi > 0 THEN 'long' ELSE 'short' END AS side, leverage, entry_px
    FROM perpdex_positions
    WHERE szi <> 0 AND snapshot_ts = (SELECT max(snapshot_ts) FROM perpdex_positions)
    ORDER BY position_value DESC, wallet, coin LIMIT 1
), oc AS (
    SELECT from_address AS wallet
    FROM onchain_transfers
    WHERE chain = 'ethereum'
      AND date IN (SELECT DISTINCT date FROM onchain_transfers WHERE chain = 'ethereum' ORDER BY date DESC LIMIT 2)
      AND from_address <> '0x0000000000000000000000000000000000000000'
    GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1
), oc_peer AS (
    SELECT to_address AS peer, token_address AS token
    FROM onchain_transfers
    WHERE chain = 'ethereum' AND from_address = (SELECT wallet FROM oc)
      AND date IN (SELECT DISTINCT date FROM onchain_transfers WHERE chain = 'ethereum' ORDER BY date DESC LIMIT 2)
    GROUP BY 1, 2 ORDER BY count(*) DESC, 1, 2 LIMIT 1
)
SELECT
    (SELECT token_id FROM pm_tok),
    (SELECT condition_id FROM pm_tok),
    (SELECT wallet FROM pm_wallet),
    (SELECT wallet FROM pd),
    (SELECT coin FROM pd),
    (SELECT coin FROM pos),
    (SELECT side FROM pos),
    (SELECT CAST(round(leverage) AS VARCHAR) FROM pos),
    (SELECT CAST(entry_px AS VARCHAR) FROM pos),
    (SELECT wallet FROM oc),
    (SELECT peer FROM oc_peer),
    (SELECT token FROM oc_peer),
    (SELECT address FROM onchain_labels GROUP BY address ORDER BY count(*) DESC, address LIMIT 1),
    (SELECT address FROM onchain_ens WHERE is_primary ORDER BY address LIMIT 1)
