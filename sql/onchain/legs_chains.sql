-- onchainLegs: the chains of the transfers, in the order the legs are inserted.
SELECT DISTINCT chain FROM onchain_transfers ORDER BY chain;
