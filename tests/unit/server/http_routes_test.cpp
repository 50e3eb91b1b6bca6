// What each request gets, decided without a socket: every route, the GET-only ones refusing
// other methods, HEAD, 404, the upgrade and its refusals, the connection limits and shutdown,
// and the admin API's token check reached through the route.

#include "server/http_routes.hpp"

#include "tests/unit/rooms/chat_world.hpp"

#include <boost/beast/http/error.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace parley::server::tests {
namespace {

namespace http = boost::beast::http;
using json = nlohmann::json;

constexpr std::string_view ws_key = "dGhlIHNhbXBsZSBub25jZQ==";

// The daemon's side of routing, with the real admin API over a chat hub of the unit tests.
class fake_environment final : public route_environment {
public:
    explicit fake_environment(config::settings s) : settings_(std::move(s)), world_(settings_) {}

    const config::settings& settings() const override { return settings_; }
    bool accepting() const override { return accepting_; }
    bool cluster_degraded() const override { return degraded_; }
    std::string metrics_text() const override {
        ++metrics_calls_;
        return "parley_ready 1\n";
    }
    admin_reply admin(http::verb method, std::string_view path, std::string_view authorization,
                      std::string_view body) override {
        ++admin_calls_;
        return handle_admin(method, path, authorization, body, world_.hub(), settings_);
    }

    config::settings settings_;
    rooms::tests::chat_world world_;
    bool accepting_ = true;
    bool degraded_ = false;
    mutable int metrics_calls_ = 0;
    int admin_calls_ = 0;
};

config::settings route_settings() {
    config::settings s = rooms::tests::test_settings();
    s.admin_token = "admin-token";
    return s;
}

http_request_view get(std::string_view target) {
    http_request_view r;
    r.method = http::verb::get;
    r.method_text = "GET";
    r.target = target;
    r.has_host = true;
    r.host = "chat.example";
    return r;
}

http_request_view with_method(http_request_view r, http::verb method) {
    r.method = method;
    r.method_text = http::to_string(method);
    return r;
}

http_request_view upgrade_request() {
    http_request_view r = get("/ws");
    r.upgrade = "websocket";
    r.connection = "Upgrade";
    r.ws_version = "13";
    r.ws_key = ws_key;
    return r;
}

class http_routes : public ::testing::Test {
protected:
    route_decision route(const http_request_view& r, std::optional<reject_reason> refused = std::nullopt) {
        return route_request(r, refused, env_);
    }

    fake_environment env_{route_settings()};
};

TEST_F(http_routes, healthz_and_readyz) {
    route_decision health = route(get("/healthz"));
    EXPECT_EQ(health.kind, route_kind::respond);
    EXPECT_EQ(health.status, http::status::ok);
    EXPECT_EQ(health.body, "ok");
    EXPECT_EQ(health.header("Server"), "parleyd");
    EXPECT_EQ(health.header("Content-Type"), "text/plain; charset=utf-8");
    EXPECT_TRUE(health.keep_alive);
    EXPECT_TRUE(health.counts_as_request);
    env_.degraded_ = true;
    EXPECT_EQ(route(get("/healthz")).body, "degraded");

    route_decision ready = route(get("/readyz?probe=1"));
    EXPECT_EQ(ready.status, http::status::ok);
    EXPECT_EQ(ready.body, "ready");
    EXPECT_EQ(ready.header("Retry-After"), "");
    env_.accepting_ = false;
    route_decision draining = route(get("/readyz"));
    EXPECT_EQ(draining.status, http::status::service_unavailable);
    EXPECT_EQ(draining.body, "shutting down");
    EXPECT_EQ(draining.header("Retry-After"), "5");
    EXPECT_FALSE(draining.rejected) << "a readiness probe is not a refused connection";
}

TEST_F(http_routes, metrics_only_when_enabled) {
    route_decision metrics = route(get("/metrics"));
    EXPECT_EQ(metrics.status, http::status::ok);
    EXPECT_EQ(metrics.body, "parley_ready 1\n");
    EXPECT_EQ(metrics.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    EXPECT_EQ(env_.metrics_calls_, 1);
    env_.settings_.metrics_enabled = false;
    route_decision off = route(get("/metrics"));
    EXPECT_EQ(off.status, http::status::not_found);
    EXPECT_EQ(env_.metrics_calls_, 1);
    EXPECT_EQ(route(with_method(get("/metrics"), http::verb::post)).status, http::status::not_found)
        << "a disabled /metrics is no route at all";
}

TEST_F(http_routes, client_json_tells_the_page_its_settings) {
    route_decision d = route(get("/client.json"));
    EXPECT_EQ(d.status, http::status::ok);
    EXPECT_EQ(d.header("Content-Type"), "application/json");
    EXPECT_EQ(d.header("Cache-Control"), "no-store");
    EXPECT_EQ(d.body, client_settings_json(env_.settings_));
    EXPECT_EQ(json::parse(d.body).value("ws_path", ""), "/ws");
}

TEST_F(http_routes, the_get_only_routes_refuse_other_methods_with_405) {
    for (std::string_view path : {"/healthz", "/readyz", "/metrics", "/client.json"}) {
        for (http::verb method : {http::verb::post, http::verb::put, http::verb::delete_}) {
            route_decision d = route(with_method(get(path), method));
            EXPECT_EQ(d.status, http::status::method_not_allowed) << path;
            EXPECT_EQ(d.body, "use GET\n") << path;
            EXPECT_TRUE(d.counts_as_request) << path;
        }
    }
    EXPECT_EQ(env_.metrics_calls_, 0);
    route_decision page = route(with_method(get("/"), http::verb::post));
    EXPECT_EQ(page.status, http::status::method_not_allowed);
    EXPECT_EQ(page.header("Allow"), "GET, HEAD");
}

TEST_F(http_routes, head_is_answered_like_get) {
    EXPECT_EQ(route(with_method(get("/healthz"), http::verb::head)).status, http::status::ok);
    EXPECT_EQ(route(with_method(get("/client.json"), http::verb::head)).status, http::status::ok);
    route_decision page = route(with_method(get("/"), http::verb::head));
    EXPECT_EQ(page.kind, route_kind::page);
    ASSERT_TRUE(page.page);
    EXPECT_TRUE(page.page->head) << "headers only, Content-Length still the body's";
}

TEST_F(http_routes, the_page_is_served_with_its_headers) {
    route_decision page = route(get("/"));
    EXPECT_EQ(page.kind, route_kind::page);
    EXPECT_EQ(page.status, http::status::ok);
    ASSERT_TRUE(page.page);
    EXPECT_FALSE(page.page->head);
    EXPECT_EQ(page.header("ETag"), page.page->etag());
    EXPECT_EQ(page.header("Cache-Control"), "no-cache");
    EXPECT_NE(page.header("Content-Security-Policy").find("frame-ancestors 'none'"), std::string_view::npos);
    EXPECT_EQ(page.header("Content-Type"), page.page->asset->content_type);

    http_request_view again = get("/");
    std::string etag(page.header("ETag"));
    again.if_none_match = etag;
    route_decision cached = route(again);
    EXPECT_EQ(cached.status, http::status::not_modified);
    EXPECT_EQ(cached.header("Content-Type"), "") << "a 304 keeps the client's copy's headers";
}

TEST_F(http_routes, an_unknown_path_is_404) {
    for (std::string_view path : {"/nothing", "/healthz/", "/ws/extra", "/admins", "/metrics.txt"}) {
        route_decision d = route(get(path));
        EXPECT_EQ(d.status, http::status::not_found) << path;
        EXPECT_EQ(d.body, "not found\n") << path;
        EXPECT_TRUE(d.keep_alive) << path;
        EXPECT_TRUE(d.counts_as_request) << path;
    }
    http_request_view closing = get("/nothing");
    closing.keep_alive = false;
    EXPECT_FALSE(route(closing).keep_alive);
}

TEST_F(http_routes, a_good_upgrade_request_upgrades) {
    route_decision d = route(upgrade_request());
    EXPECT_EQ(d.kind, route_kind::upgrade);
    EXPECT_EQ(d.status, http::status::switching_protocols);
    EXPECT_EQ(d.header("Upgrade"), "websocket");
    EXPECT_EQ(d.header("Connection"), "Upgrade");
    EXPECT_EQ(d.header("Sec-WebSocket-Accept"), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");  // RFC 6455 section 1.3
    EXPECT_FALSE(d.counts_as_request);
    EXPECT_FALSE(d.rejected);
    EXPECT_FALSE(d.failure);
    http_request_view with_query = upgrade_request();
    with_query.target = "/ws?room=lobby";
    EXPECT_EQ(route(with_query).kind, route_kind::upgrade);
}

TEST_F(http_routes, a_bad_upgrade_request_is_refused_and_counted) {
    http_request_view old = upgrade_request();
    old.ws_version = "8";
    route_decision d = route(old);
    EXPECT_EQ(d.kind, route_kind::respond);
    EXPECT_EQ(d.status, http::status::upgrade_required);
    EXPECT_EQ(d.header("Sec-WebSocket-Version"), "13");
    EXPECT_EQ(d.failure, handshake_failure::upgrade_required);
    EXPECT_FALSE(d.keep_alive);
    EXPECT_FALSE(d.note.empty());

    route_decision plain = route(get("/ws"));
    EXPECT_EQ(plain.status, http::status::bad_request) << "not an upgrade at all";
    EXPECT_EQ(plain.failure, handshake_failure::bad_request);

    http_request_view bad_key = upgrade_request();
    bad_key.ws_key = "short";
    route_decision bad = route(bad_key);
    EXPECT_EQ(bad.status, http::status::bad_request);
    EXPECT_EQ(bad.failure, handshake_failure::bad_request);
    EXPECT_FALSE(bad.keep_alive);
}

TEST_F(http_routes, a_foreign_origin_is_403) {
    http_request_view foreign = upgrade_request();
    foreign.origin = "https://evil.example";
    route_decision d = route(foreign);
    EXPECT_EQ(d.status, http::status::forbidden);
    EXPECT_EQ(d.rejected, reject_reason::origin);
    EXPECT_EQ(d.note, "upgrade refused: origin 'https://evil.example' not allowed");
    http_request_view same = upgrade_request();
    same.origin = "https://chat.example";
    EXPECT_EQ(route(same).kind, route_kind::upgrade);
}

TEST_F(http_routes, over_a_connection_limit_everything_gets_503_and_closes) {
    for (reject_reason reason : {reject_reason::max_connections, reject_reason::max_connections_per_ip}) {
        for (const http_request_view& r : {upgrade_request(), get("/healthz")}) {
            route_decision d = route(r, reason);
            EXPECT_EQ(d.status, http::status::service_unavailable);
            EXPECT_EQ(d.body, "too many connections, try again later\n");
            EXPECT_EQ(d.header("Retry-After"), "5");
            EXPECT_EQ(d.rejected, reason);
            EXPECT_FALSE(d.keep_alive);
            EXPECT_FALSE(d.counts_as_request);
        }
    }
}

TEST_F(http_routes, during_shutdown_an_upgrade_gets_503) {
    env_.accepting_ = false;
    route_decision d = route(upgrade_request());
    EXPECT_EQ(d.status, http::status::service_unavailable);
    EXPECT_EQ(d.body, "server shutting down\n");
    EXPECT_EQ(d.rejected, reject_reason::shutting_down);
    EXPECT_EQ(route(get("/healthz")).status, http::status::ok) << "plain HTTP is still answered";
}

TEST_F(http_routes, admin_requests_go_to_the_admin_api_and_its_token_check) {
    http_request_view no_token = get("/admin/users");
    route_decision d = route(no_token);
    EXPECT_EQ(d.status, http::status::unauthorized);
    EXPECT_EQ(d.header("WWW-Authenticate"), "Bearer realm=\"parley admin\"");
    EXPECT_EQ(d.header("Content-Type"), "application/json");
    EXPECT_EQ(d.header("Cache-Control"), "no-store");
    EXPECT_TRUE(d.counts_as_request);

    http_request_view wrong = get("/admin/users");
    wrong.authorization = "Bearer not-it";
    EXPECT_EQ(route(wrong).status, http::status::unauthorized);

    http_request_view right = get("/admin/users");
    right.authorization = "Bearer admin-token";
    route_decision ok = route(right);
    EXPECT_EQ(ok.status, http::status::ok);
    EXPECT_EQ(ok.header("WWW-Authenticate"), "");
    EXPECT_EQ(json::parse(ok.body), json::parse(R"({"users":[]})"));

    http_request_view post_users = with_method(right, http::verb::post);
    route_decision not_allowed = route(post_users);
    EXPECT_EQ(not_allowed.status, http::status::method_not_allowed);
    EXPECT_EQ(not_allowed.header("Allow"), "GET");

    http_request_view bare = with_method(get("/admin"), http::verb::post);
    bare.authorization = "Bearer admin-token";
    EXPECT_EQ(route(bare).status, http::status::not_found) << "only a GET of /admin is the page's";
    EXPECT_EQ(env_.admin_calls_, 5);

    env_.settings_.admin_token.clear();
    route_decision off = route(right);
    EXPECT_EQ(off.status, http::status::not_found) << "without a token the API is off";
}

TEST_F(http_routes, the_admin_page_is_served_without_a_token_and_the_api_still_wants_one) {
    route_decision page = route(get("/admin/"));
    EXPECT_EQ(page.kind, route_kind::page);
    EXPECT_EQ(page.status, http::status::ok);
    ASSERT_TRUE(page.page);
    EXPECT_EQ(page.page->asset->path, "/admin/index.html");
    EXPECT_EQ(page.header("Content-Type"), "text/html; charset=utf-8");
    EXPECT_NE(page.header("Content-Security-Policy").find("script-src 'self'"), std::string_view::npos);
    EXPECT_TRUE(page.counts_as_request);
    EXPECT_NE(page.page->body().find("admin.js"), std::string_view::npos) << "the page loads its script";

    for (std::string_view file : {"/admin/admin.js", "/admin/admin.css"}) {
        route_decision d = route(get(file));
        EXPECT_EQ(d.kind, route_kind::page) << file;
        EXPECT_EQ(d.status, http::status::ok) << file;
    }
    EXPECT_EQ(route(get("/admin/admin.js")).header("Content-Type"), "text/javascript; charset=utf-8");
    route_decision head = route(with_method(get("/admin/"), http::verb::head));
    ASSERT_TRUE(head.page);
    EXPECT_TRUE(head.page->head);

    route_decision bare = route(get("/admin?x=1"));
    EXPECT_EQ(bare.status, http::status::permanent_redirect);
    EXPECT_EQ(bare.header("Location"), "/admin/?x=1");
    EXPECT_EQ(env_.admin_calls_, 0) << "the page never reaches the API";

    // Everything else under /admin/ is still the API's, behind the token: the API's paths, a
    // file name the page does not have, and any method but GET and HEAD on the page's files.
    for (const http_request_view& r : {get("/admin/users"), get("/admin/rooms"), get("/admin/nothing.js"),
                                       with_method(get("/admin/"), http::verb::post),
                                       with_method(get("/admin/admin.js"), http::verb::post),
                                       with_method(get("/admin"), http::verb::put)}) {
        route_decision d = route(r);
        EXPECT_EQ(d.status, http::status::unauthorized) << r.method_text << " " << r.target;
        EXPECT_EQ(d.header("WWW-Authenticate"), "Bearer realm=\"parley admin\"") << r.target;
    }
    EXPECT_EQ(env_.admin_calls_, 6);

    // With the API off the page is off too.
    env_.settings_.admin_token.clear();
    for (std::string_view path : {"/admin/", "/admin/admin.js", "/admin"}) {
        EXPECT_EQ(route(get(path)).status, http::status::not_found) << path;
    }
}

TEST_F(http_routes, an_admin_body_reaches_the_handler) {
    http_request_view kick = with_method(get("/admin/kick"), http::verb::post);
    kick.authorization = "Bearer admin-token";
    kick.body = R"({"user":"nobody"})";
    route_decision d = route(kick);
    EXPECT_EQ(d.status, http::status::not_found);
    EXPECT_EQ(json::parse(d.body).value("error", ""), "no user 'nobody' is online");
}

TEST(http_parse_errors, each_parser_error_has_its_answer) {
    route_decision head = route_parse_error(http::error::header_limit);
    EXPECT_EQ(head.status, http::status::request_header_fields_too_large);
    EXPECT_EQ(head.failure, handshake_failure::header_too_large);
    EXPECT_FALSE(head.keep_alive);
    route_decision body = route_parse_error(http::error::body_limit);
    EXPECT_EQ(body.status, http::status::payload_too_large);
    EXPECT_EQ(body.failure, handshake_failure::bad_request);
    route_decision garbage = route_parse_error(http::error::bad_method);
    EXPECT_EQ(garbage.status, http::status::bad_request);
    EXPECT_EQ(garbage.body, "malformed HTTP request\n");
    EXPECT_EQ(garbage.failure, handshake_failure::bad_request);
    EXPECT_FALSE(garbage.counts_as_request);
}

}  // namespace
}  // namespace parley::server::tests
