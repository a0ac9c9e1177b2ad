-- PostgreSQL compiles a statement to machine code (JIT) when its plan's
-- estimated cost passes jit_above_cost, whatever the statement does. The
-- service's statements are short and touch rows by index, but an estimate
-- can pass that cost while the statement does not (a table bloated by
-- withdrawn jobs makes a batch update of 1,000 jobs look like a walk of
-- the table), and the compiling is paid on every run: the store's update
-- of 1,000 changed jobs took 221.6 ms with JIT and 91.7 ms without, the
-- median of 30 in bench scenario 1 on one machine. No statement of the
-- service runs long enough to win back what compiling costs.
--
-- Set for the database, so it holds for every session on it, through
-- PgBouncer too, from the next session on. Only the database's owner (or
-- a superuser) may set it: a role that may not gets a warning, and the
-- migration goes on, as JIT slows the service without breaking it
-- (docs/deploy.md, "The service (each replica)").
DO $$
BEGIN
    EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());
EXCEPTION WHEN insufficient_privilege THEN
    RAISE WARNING 'jit stays on for database %: only its owner may turn it off (ALTER DATABASE % SET jit = off)',
        current_database(), current_database();
END
$$;
