package engine

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// Check validates one aspect of a response. A failed check returns an *Error
// (ClassApplication unless wrapped in Critical) that names the request.
type Check func(res *Response) error

// Check runs checks in order and returns the first failure, naming the
// response's endpoint and carrying its URL for the staff log.
func (r *Response) Check(checks ...Check) error {
	for _, c := range checks {
		if err := c(r); err != nil {
			e := *AsError(err)
			if e.Request == "" {
				e.Request = r.Endpoint
			}
			if e.URL == "" {
				e.URL = r.URL.String()
			}
			return &e
		}
	}
	return nil
}

func failf(code, format string, args ...any) error {
	return &Error{Code: code, Class: ClassApplication, Message: fmt.Sprintf(format, args...)}
}

// Status expects one of the given status codes.
func Status(codes ...int) Check {
	return func(res *Response) error {
		if slices.Contains(codes, res.StatusCode) {
			return nil
		}
		want := make([]string, len(codes))
		for i, c := range codes {
			want[i] = fmt.Sprint(c)
		}
		return failf("status", "expected status %s, got %d", strings.Join(want, " or "), res.StatusCode)
	}
}

// Header expects a header to have exactly this value (after trimming).
func Header(name, want string) Check {
	return func(res *Response) error {
		got := strings.TrimSpace(res.Header.Get(name))
		if got != want {
			return failf("header", "expected header %s: %q, got %q", name, want, got)
		}
		return nil
	}
}

// HeaderHasToken expects a comma-separated header (such as Cache-Control) to
// contain a token, compared without case.
func HeaderHasToken(name, token string) Check {
	return func(res *Response) error {
		for _, v := range res.Header.Values(name) {
			for _, t := range strings.Split(v, ",") {
				if strings.EqualFold(strings.TrimSpace(t), token) {
					return nil
				}
			}
		}
		return failf("header", "expected %s to contain %q, got %q", name, token, strings.Join(res.Header.Values(name), ", "))
	}
}

// ContentType expects a media type such as "text/html", ignoring parameters.
func ContentType(mediaType string) Check {
	return func(res *Response) error {
		got := res.Header.Get("Content-Type")
		mt, _, err := mime.ParseMediaType(got)
		if err != nil || !strings.EqualFold(mt, mediaType) {
			return failf("content-type", "expected Content-Type %s, got %q", mediaType, got)
		}
		return nil
	}
}

// RedirectTo expects a redirect (301, 302, 303 or 307) whose Location passes
// match; match returns "" when the location is right, or what is wrong.
func RedirectTo(match func(loc string) string) Check {
	return func(res *Response) error {
		switch res.StatusCode {
		case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect:
		default:
			return failf("status", "expected a redirect, got status %d", res.StatusCode)
		}
		u, err := res.Location()
		if err != nil {
			return err
		}
		if why := match(u.RequestURI() + fragment(u.Fragment)); why != "" {
			return failf("redirect", "redirected to %s: %s", u.RequestURI(), why)
		}
		return nil
	}
}

func fragment(f string) string {
	if f == "" {
		return ""
	}
	return "#" + f
}

// HTML runs f on the parsed document.
func HTML(f func(doc *goquery.Document) error) Check {
	return func(res *Response) error {
		doc, err := res.Document()
		if err != nil {
			return err
		}
		return f(doc)
	}
}

// Count expects exactly n elements matching a CSS selector.
func Count(selector string, n int) Check {
	return HTML(func(doc *goquery.Document) error {
		if got := doc.Find(selector).Length(); got != n {
			return failf("html", "expected %d element(s) matching %q, found %d", n, selector, got)
		}
		return nil
	})
}

// Exists expects at least one element matching a CSS selector.
func Exists(selector string) Check {
	return HTML(func(doc *goquery.Document) error {
		if doc.Find(selector).Length() == 0 {
			return failf("html", "expected an element matching %q, found none", selector)
		}
		return nil
	})
}

// Text expects the trimmed text of the first element matching selector.
func Text(selector, want string) Check {
	return HTML(func(doc *goquery.Document) error {
		sel := doc.Find(selector).First()
		if sel.Length() == 0 {
			return failf("html", "expected an element matching %q, found none", selector)
		}
		if got := strings.TrimSpace(sel.Text()); got != want {
			return failf("html", "expected %q to read %q, got %q", selector, want, abbreviate(got, 80))
		}
		return nil
	})
}

// JSON expects a JSON body (by Content-Type and by syntax) and decodes it
// into v, a pointer to a typed struct.
func JSON(v any) Check {
	return func(res *Response) error {
		if err := ContentType("application/json")(res); err != nil {
			return err
		}
		if err := json.Unmarshal(res.Body, v); err != nil {
			return failf("json", "invalid JSON for %T: %v", v, err)
		}
		return nil
	}
}

// Fail builds a check failure for use inside HTML callbacks and scenario code.
func Fail(code, format string, args ...any) error { return failf(code, format, args...) }

func abbreviate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
