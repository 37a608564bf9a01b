-- The CHECK constraints of the tables every callback writes, compiled once
-- per session instead of once per statement.
--
-- Postgres reads a table's CHECK constraints from their stored node text,
-- and plans them, again in every statement that writes the table
-- (ExecRelCheck: stringToNode, then expression_planner), at a cost that
-- grows with the length of that text: from 20,000 instructions for
-- "amount > 0" to 60,000 for accounts_system_balance_check, a third of a
-- capture's work for its seven. A domain's CHECK is read and planned once
-- per session, in the type cache; a statement only sets up its evaluation.
--
-- So the constraints of one column become domains, each keeping the name,
-- the condition and the error (23514, the constraint's name) it had: a
-- domain's CHECK passes NULL as a table's does, and every column stays NOT
-- NULL. The constraints of several columns stay on their tables, with the
-- same names and conditions (accounts_available_nonnegative shorter, below),
-- their numeric zeros written as numeric constants (0.0) rather than
-- integers cast to numeric, which Postgres stores unfolded and folds again
-- in every statement:
--
--   accounts.held     ledger_held            accounts_held_nonnegative   held >= 0
--   holds.amount      ledger_hold_amount     holds_amount_positive       amount > 0
--   credits.amount    ledger_credit_amount   credits_amount_positive     amount > 0
--   journal.amount    ledger_journal_amount  journal_amount_nonzero      amount <> 0
--   journal.kind      ledger_journal_kind    journal_kind_check          kind IN (…)
--
-- Each domain is created without its CHECK, the column moved to it (no
-- rewrite: the same base type, no constraint yet), then the CHECK added
-- (Postgres verifies every stored value with a scan) and the table's
-- dropped. The views that read the columns are dropped and made again as
-- 001_baseline.sql made them (a column a view reads cannot change type);
-- docs/runtime-role.sql's default privileges grant them to the runtime
-- role again, as for every object a migration makes.

-- The views over the columns that change type.
DROP VIEW account_balances;
DROP VIEW journal_entries;
DROP VIEW journal_transactions;
DROP VIEW hold_states;

-- ---------------------------------------------------------------------------
-- Accounts

CREATE DOMAIN ledger_held AS numeric;
ALTER TABLE accounts DROP CONSTRAINT accounts_held_nonnegative;
ALTER TABLE accounts DROP CONSTRAINT accounts_available_nonnegative;
ALTER TABLE accounts DROP CONSTRAINT accounts_system_balance_check;
ALTER TABLE accounts ALTER COLUMN held TYPE ledger_held;
-- The amount held by open holds is never negative.
ALTER DOMAIN ledger_held ADD CONSTRAINT accounts_held_nonnegative CHECK (VALUE >= 0);
-- I1: a customer account never commits more than it has. Written for every
-- account: a system account's balance and held are both zero
-- (accounts_system_balance_check), so that it always passes this one, and
-- the two together refuse exactly what 001_baseline.sql's refused (the
-- condition "kind <> 'customer' OR" was a third of this constraint's
-- text). A change of a system account's held or balance that breaks both
-- is reported under this name, the first of the two.
ALTER TABLE accounts ADD CONSTRAINT accounts_available_nonnegative
    CHECK (balance - held >= 0.0);
-- System accounts carry no holds and store no balance: theirs is derived
-- from the journal (account_balances), so that captures and credits never
-- queue on one hot row.
ALTER TABLE accounts ADD CONSTRAINT accounts_system_balance_check
    CHECK (kind = 'customer' OR (balance = 0.0 AND held = 0.0));

-- ---------------------------------------------------------------------------
-- The journal

CREATE DOMAIN ledger_journal_amount AS numeric;
CREATE DOMAIN ledger_journal_kind AS text;
ALTER TABLE journal DROP CONSTRAINT journal_amount_nonzero;
ALTER TABLE journal DROP CONSTRAINT journal_kind_check;
ALTER TABLE journal DROP CONSTRAINT journal_contra_check;
ALTER TABLE journal ALTER COLUMN amount TYPE ledger_journal_amount;
ALTER TABLE journal ALTER COLUMN kind TYPE ledger_journal_kind;
ALTER DOMAIN ledger_journal_amount ADD CONSTRAINT journal_amount_nonzero CHECK (VALUE <> 0);
ALTER DOMAIN ledger_journal_kind ADD CONSTRAINT journal_kind_check
    CHECK (VALUE IN ('adjustment', 'capture', 'credit', 'reconciliation'));
-- I2 by construction, in one currency: the other side is the system
-- account of the row's own currency (core for adjustments, settlement for
-- the rest).
ALTER TABLE journal ADD CONSTRAINT journal_contra_check
    CHECK (contra_account_id = CASE WHEN kind = 'adjustment' THEN 'core:' ELSE 'settlement:' END || currency);

-- ---------------------------------------------------------------------------
-- Holds and credits

CREATE DOMAIN ledger_hold_amount AS numeric;
ALTER TABLE holds DROP CONSTRAINT holds_amount_positive;
ALTER TABLE holds ALTER COLUMN amount TYPE ledger_hold_amount;
ALTER DOMAIN ledger_hold_amount ADD CONSTRAINT holds_amount_positive CHECK (VALUE > 0);

CREATE DOMAIN ledger_credit_amount AS numeric;
ALTER TABLE credits DROP CONSTRAINT credits_amount_positive;
ALTER TABLE credits ALTER COLUMN amount TYPE ledger_credit_amount;
ALTER DOMAIN ledger_credit_amount ADD CONSTRAINT credits_amount_positive CHECK (VALUE > 0);

-- ---------------------------------------------------------------------------
-- The views, as 001_baseline.sql made them.

CREATE VIEW journal_entries AS
    SELECT transaction_id, account_id, currency, amount, created_at FROM journal
    UNION ALL
    SELECT transaction_id, contra_account_id, currency, -amount, created_at FROM journal;
CREATE VIEW journal_transactions AS
    SELECT transaction_id, kind, reference, memo, created_at FROM journal;

CREATE VIEW account_balances AS
    SELECT a.account_id, a.kind, a.currency, a.status,
           CASE WHEN a.kind = 'customer' THEN a.balance ELSE coalesce(s.total, 0) END AS balance,
           a.held
    FROM accounts a
    LEFT JOIN (SELECT contra_account_id, -sum(amount) AS total FROM journal GROUP BY contra_account_id) s
           ON s.contra_account_id = a.account_id;

CREATE VIEW hold_states AS
    SELECT h.hold_reference, h.payout_id, h.account_id, h.funding_source, h.currency, h.amount,
           coalesce(s.status, 'held') AS status,
           CASE WHEN s.status = 'captured' THEN s.reference END AS capture_reference,
           CASE WHEN s.status = 'released' THEN s.reference END AS release_reference,
           s.reason AS release_reason, s.transaction_id, h.placed_at,
           CASE WHEN s.status = 'captured' THEN s.settled_at END AS captured_at,
           CASE WHEN s.status = 'released' THEN s.settled_at END AS released_at
    FROM holds h LEFT JOIN hold_settlements s USING (hold_reference);
