-- OnchainTokenTransfers: one published transfers board, (chain, period) = $1, cut from
-- the chain's boards computed in one pass by token_transfers_board_all.sql (a temporary
-- table of the connection that computed them), in token_transfers_board.sql's columns
-- and order (the key's first part is the chain).
SELECT token, tab, address, bought::DOUBLE, sold::DOUBLE, usd_spent::DOUBLE, usd_received::DOUBLE, split_part($1, '.', 1) AS chains, entity
FROM oc_board_family
WHERE board = $1
ORDER BY token, tab, (CASE WHEN tab = 'bought' THEN bought ELSE sold END) DESC, address;
