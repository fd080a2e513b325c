#include "common/net/http_router.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/api/string_view_compat.h"
#include "nlohmann/json.hpp"

namespace tempest::net {
namespace {

using api::StdSv;
using api::Sv;

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> out;
  for (absl::string_view s : absl::StrSplit(Sv(path), '/')) {
    if (!s.empty()) out.push_back(StdSv(s));
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

HttpResponse HttpResponse::Json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

HttpResponse HttpResponse::Error(int status, std::string_view error, std::string_view message) {
  nlohmann::json j;
  j["error"] = std::string(error);
  j["errorMessage"] = std::string(message);
  // Replace invalid UTF-8 (e.g. echoed request bytes) instead of throwing.
  return Json(status, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string HttpRequest::QueryParam(std::string_view name) const {
  for (absl::string_view piece : absl::StrSplit(query, '&')) {
    const std::string_view pair = StdSv(piece);
    const size_t eq = pair.find('=');
    std::string key;
    if (!HttpRouter::PercentDecode(pair.substr(0, eq), &key, true) || key != name) continue;
    std::string value;
    if (eq != std::string_view::npos &&
        HttpRouter::PercentDecode(pair.substr(eq + 1), &value, true)) {
      return value;
    }
    return "";
  }
  return "";
}

bool HttpRouter::PercentDecode(std::string_view in, std::string* out, bool plus_as_space) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      const int hi = HexValue(in[i + 1]);
      const int lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_as_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

absl::Status HttpRouter::Add(std::string_view method, std::string_view pattern,
                             HttpHandler handler) {
  if (method.empty() || pattern.empty() || pattern[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("bad route '", Sv(method), " ", Sv(pattern), "'"));
  }
  if (!handler) return absl::InvalidArgumentError("route without a handler");
  RouteEntry route;
  route.method = std::string(method);
  for (std::string_view seg : SplitPath(pattern)) {
    if (seg == ":")
      return absl::InvalidArgumentError(absl::StrCat("unnamed parameter in ", Sv(pattern)));
    if (seg[0] != ':') ++route.literal_count;
    route.segments.emplace_back(seg);
  }
  for (const RouteEntry& r : routes_) {
    if (r.method != route.method || r.segments.size() != route.segments.size()) continue;
    bool same = true;
    for (size_t i = 0; i < r.segments.size() && same; ++i) {
      const bool a_param = r.segments[i][0] == ':';
      const bool b_param = route.segments[i][0] == ':';
      same = (a_param && b_param) || (!a_param && !b_param && r.segments[i] == route.segments[i]);
    }
    if (same) {
      return absl::AlreadyExistsError(
          absl::StrCat("duplicate route ", Sv(method), " ", Sv(pattern)));
    }
  }
  route.handler = std::move(handler);
  routes_.push_back(std::move(route));
  return absl::OkStatus();
}

HttpRouter::Match HttpRouter::Route(std::string_view method, std::string_view path) const {
  Match best;
  int best_literals = -1;
  const std::vector<std::string_view> segments = SplitPath(path);
  for (const RouteEntry& route : routes_) {
    if (route.segments.size() != segments.size()) continue;
    std::map<std::string, std::string> params;
    bool ok = true;
    for (size_t i = 0; i < segments.size() && ok; ++i) {
      const std::string& want = route.segments[i];
      if (want[0] == ':') {
        std::string decoded;
        ok = PercentDecode(segments[i], &decoded);
        if (ok) params[want.substr(1)] = std::move(decoded);
      } else {
        ok = want == segments[i];
      }
    }
    if (!ok) continue;
    if (route.method != method) {
      best.allowed_methods.push_back(route.method);
      continue;
    }
    if (route.literal_count > best_literals) {
      best_literals = route.literal_count;
      best.kind = MatchKind::kFound;
      best.handler = &route.handler;
      best.params = std::move(params);
    }
  }
  if (best.kind != MatchKind::kFound && !best.allowed_methods.empty()) {
    best.kind = MatchKind::kMethodNotAllowed;
  }
  return best;
}

}  // namespace tempest::net
