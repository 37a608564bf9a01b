-- Account IDs that print alike are one account: each customer account
-- stores the confusable skeleton of its ID (UTS #39, section 4; computed
-- in Go by ledger.Skeleton, which SQL cannot do), and no two accounts share
-- one, so that "paypal", "paypaI", "paypa1" and "bıll"/"bill" cannot all
-- be opened.
--
-- NULL for system accounts (customer IDs that print like their prefixes
-- are refused before they reach the database) and for customer accounts
-- created before this migration or by an earlier build during a rolling
-- upgrade: store fills those in (store.DB.FillSkeletons) and compares a new
-- ID with those it has not filled yet, so that they are protected too.
-- Balance and held updates leave the column alone: they stay HOT.
ALTER TABLE accounts ADD COLUMN skeleton text COLLATE "C";

-- An account ID prints like no other's.
CREATE UNIQUE INDEX accounts_skeleton_key ON accounts (skeleton);

-- The customer accounts whose skeleton is not stored yet.
CREATE INDEX accounts_skeleton_missing_idx ON accounts (account_id) WHERE skeleton IS NULL AND kind = 'customer';
