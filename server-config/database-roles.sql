-- The two roles of the payment consumer's database, applied to it on every start of the run command, the tests and
-- the container (it converges: rerun it at any time). Run as a superuser or the database's owner, connected to the
-- payments database, after setting (session level) payments.owner, payments.owner_password, payments.app and
-- payments.app_password; an empty password leaves a role's password as it is.
--   owner (DB_OWNER_USER): owns the database and its schema; Flyway migrates as this role, nothing else uses it.
--   app (DB_USER): what the application connects as; may read and write the rows of every table, present and
--                  future (ALTER DEFAULT PRIVILEGES), but never CREATE, ALTER, DROP or TRUNCATE anything.
DO $roles$
DECLARE
    owner text := current_setting('payments.owner');
    app text := current_setting('payments.app');
    owner_password text := current_setting('payments.owner_password');
    app_password text := current_setting('payments.app_password');
BEGIN
    IF owner = app THEN
        RAISE EXCEPTION 'the application role (%) must not be the owner', app;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = owner) THEN
        EXECUTE format('CREATE ROLE %I LOGIN', owner);
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = app) THEN
        EXECUTE format('CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE', app);
    END IF;
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = app) THEN
        RAISE EXCEPTION 'the application role (%) is a superuser', app;
    END IF;
    -- A superuser owner (a developer's postgres) keeps the password it has.
    IF owner_password <> '' AND NOT (SELECT rolsuper FROM pg_roles WHERE rolname = owner) THEN
        EXECUTE format('ALTER ROLE %I PASSWORD %L', owner, owner_password);
    END IF;
    IF app_password <> '' THEN
        EXECUTE format('ALTER ROLE %I PASSWORD %L', app, app_password);
    END IF;

    EXECUTE format('ALTER DATABASE %I OWNER TO %I', current_database(), owner);
    EXECUTE format('ALTER SCHEMA public OWNER TO %I', owner);
    REVOKE CREATE ON SCHEMA public FROM PUBLIC;
    EXECUTE format('GRANT CONNECT, TEMPORARY ON DATABASE %I TO %I', current_database(), app);
    EXECUTE format('GRANT USAGE ON SCHEMA public TO %I', app);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO %I', app);
    EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO %I', app);
    EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO %I',
        owner, app);
    EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO %I',
        owner, app);
END
$roles$;
