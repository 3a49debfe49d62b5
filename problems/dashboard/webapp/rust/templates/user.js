// The dashboard's refresh interval, for this user's grade.
var DASHBOARD_REFRESH_MS = {{ refresh_ms }};
