-- tokenSymbols (OnchainWalletCompare) maps token addresses of one chain to symbols.
-- $1 chain, $2 comma-separated token addresses.
SELECT token_address, symbol
FROM onchain_tokens_mem
WHERE chain = $1 AND token_address IN (SELECT unnest(string_split($2, ',')));
