-- The radius filter reads the applications inside its bounding box from
-- the location index. Led by the latitude, that index holds the box's
-- rows among every row of its band of latitude, coast to coast: at
-- 1,000,000 applications, 50 miles around 07030 read 122,787 entries to
-- find the 52,353 in the box, and with driver_type its page by state took
-- 18-20 ms, its count 15 ms. Led by bands of a quarter of a degree of
-- latitude (about 17 miles), then the longitude, the index holds each
-- band's part of the box together: the filter names the bands the box
-- spans (driverlist.go, addRadius), and the same page took 9-10 ms, the
-- count 7 ms. The latitude is included, for the box's exact test.
DROP INDEX applications_location_page_idx;
CREATE INDEX applications_location_page_idx ON applications (account_id, (floor(latitude * 4)::integer), longitude)
    INCLUDE (latitude, driver_id, sent, has_job_apps, state, driver_type, experience_halves, endorsements,
             first_name_key, last_name_key);
