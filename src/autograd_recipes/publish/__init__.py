"""Building and shipping the site: the build, its offline copies, the scans of what it made, bench and Lighthouse."""
