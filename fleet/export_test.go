package fleet

// Migrations are the schema's versions, for the test that upgrades a
// schema made by an older skillsync.
var Migrations = migrations

// HostIDOf is the id of root on a host of that name.
var HostIDOf = hostIDOf
