-- onchainWalletIndex: the ids of wallet_index_dict.sql, in id order within each kind.
SELECT kind, v FROM onchain_ids_mem ORDER BY kind, id;
