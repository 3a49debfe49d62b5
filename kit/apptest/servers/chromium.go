package servers

// Chromium finds Debian's Chromium for the browser tests (which drive it
// through chromedp, each with a private profile).
func Chromium() (string, error) { return look("chromium", "chromium", "chromium-browser") }
