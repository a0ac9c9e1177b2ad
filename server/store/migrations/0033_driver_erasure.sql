-- Erasure (docs/api.md, Erasing a driver): an account may remove
-- everything it holds about one driver, its events about the driver
-- included. An event names its driver in a column of its own, so that the
-- erasure finds the driver's events by an index rather than by reading the
-- data of every event of the account.
ALTER TABLE events ADD COLUMN driver_id bigint;

UPDATE events SET driver_id = (data ->> 'id')::bigint WHERE type = 'driver.application.received';
UPDATE events SET driver_id = (data ->> 'driverId')::bigint WHERE type = 'driver.status.changed';

CREATE INDEX events_driver_idx ON events (account_id, driver_id) WHERE driver_id IS NOT NULL;
