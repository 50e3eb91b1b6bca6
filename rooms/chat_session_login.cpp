// A session's login: the token's check (token mode), the name's claim (locally, and across the
// cluster when there is one), and the welcome that ends it. The rest of the session's requests
// are in chat_session.cpp and its siblings.

#include "rooms/chat_session.hpp"

#include "protocol/access_token.hpp"
#include "protocol/names.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/session_task.hpp"
#include "rooms/worker_context.hpp"

namespace parley::rooms {

using protocol::error_code;
using protocol::request_type;

void chat_session::on_login(request& req) {
    if (logged_in() || claiming_) {
        fail(error_code::already_logged_in, protocol::default_message(error_code::already_logged_in), req.id);
        return;
    }
    if (!protocol::valid_user_name(req.user)) {
        fail(error_code::invalid_name, protocol::user_name_rule(), req.id);
        return;
    }
    std::optional<login_rights> rights = check_token(req);
    if (!rights || !register_name(req, rights->max_sessions)) {
        return;
    }
    user_ = std::move(req.user);
    if (cluster_link* cluster = worker_.hub().cluster()) {
        claim_in_cluster(*cluster, std::move(req.id), std::move(rights->grant));
        return;
    }
    finish_login(cluster_link::claim_outcome::claimed, std::move(req.id), std::move(rights->grant));
}

std::optional<chat_session::login_rights> chat_session::check_token(const request& req) {
    const auto& s = worker_.settings();
    if (s.auth_mode != config::auth_mode::token) {
        return login_rights{};
    }
    if (req.token.empty()) {
        refuse_login("login needs a token", req.id);
        return std::nullopt;
    }
    const std::int64_t now_s = unix_millis() / 1000;
    protocol::token_rules rules;
    rules.leeway = static_cast<std::int64_t>(s.auth_token_leeway_ms / 1000);
    rules.issuer = s.auth_issuer;
    rules.audience = s.auth_audience;
    auto check = protocol::verify_token(req.token, worker_.token_keys(), now_s, rules);
    if (!check.claims) {
        if (check.problem == protocol::token_problem::unknown_key) {
            // Perhaps a key the issuer added since the keys were read (a rotation).
            worker_.hub().keys_wanted();
        }
        // The client learns whether to fetch a fresh token; what exactly failed stays ours.
        refuse_login(check.problem == protocol::token_problem::expired ? "the token has expired"
                                                                        : "the token was not accepted",
                     req.id);
        return std::nullopt;
    }
    if (check.claims->subject != req.user) {
        refuse_login("the token is for another user", req.id);
        return std::nullopt;
    }
    room_grant::role_patterns roles;
    for (auto& [pattern, name] : check.claims->roles) {
        std::optional<room_role> role = parse_role(name);
        if (!role) {
            refuse_login("the token was not accepted", req.id);
            return std::nullopt;
        }
        roles.emplace_back(std::move(pattern), *role);
    }
    std::optional<room_grant> grant;
    if (check.claims->rooms || !roles.empty()) {
        grant.emplace(std::move(check.claims->rooms), std::move(roles));
    }
    return login_rights{s.max_sessions_per_user, std::move(grant)};
}

bool chat_session::register_name(const request& req, std::size_t max_sessions) {
    switch (worker_.hub().users().try_register(req.user, handle_, max_sessions)) {
    case registry::user_registry::outcome::registered:
        return true;
    case registry::user_registry::outcome::session_limit:
        fail(error_code::username_taken,
             "'" + req.user + "' is logged in on " + std::to_string(max_sessions) +
                 " connections already, the most allowed",
             req.id);
        return false;
    case registry::user_registry::outcome::name_taken:
    case registry::user_registry::outcome::invalid_name:
        fail(error_code::username_taken, "the name '" + req.user + "' is in use", req.id);
        return false;
    }
    return false;
}

void chat_session::claim_in_cluster(cluster_link& cluster, std::string re,
                                    std::optional<room_grant> grant) {
    // The name is ours on this node; the cluster decides whether it is free everywhere. Its
    // answer comes on this worker's thread, and finds this session only if it still waits.
    claiming_ = true;
    worker_context& owner = worker_;
    std::uint32_t session_id = handle_.session;
    cluster.claim_name(user_, handle_,
                       [&owner, session_id, re = std::move(re),
                        claim = std::move(grant)](cluster_link::claim_outcome outcome) mutable {
                           if (chat_session* session = owner.find_session(session_id);
                               session != nullptr && session->claiming_) {
                               session->finish_login(outcome, std::move(re), std::move(claim));
                           }
                       });
}

void chat_session::finish_login(cluster_link::claim_outcome outcome, std::string re,
                                std::optional<room_grant> grant) {
    claiming_ = false;
    if (outcome == cluster_link::claim_outcome::taken) {
        release_name(user_);
        fail(error_code::username_taken, "the name '" + user_ + "' is in use", re);
        user_.clear();
        return;
    }
    if (grant) {
        worker_.set_grant(handle_.session, std::move(*grant));
    }
    if (cluster_link* cluster = identities_in_cluster()) {
        // The user's conversations are in Redis: welcome once they are read. Requests wait
        // (not_logged_in) meanwhile, so nothing is answered before the welcome.
        claiming_ = true;
        worker_context& owner = worker_;
        std::uint32_t session_id = handle_.session;
        cluster->load_conversations(
            user_, handle_,
            [&owner, session_id, re = std::move(re)](std::optional<std::vector<marked_log>> logs) {
                if (chat_session* session = owner.find_session(session_id);
                    session != nullptr && session->claiming_) {
                    session->claiming_ = false;
                    session->welcome(re, logs);
                }
            });
        return;
    }
    // Markers before the welcome, which lists the conversations they are in.
    worker_.hub().markers().attach(user_, keeps_identities());
    markers_attached_ = true;
    welcome(re, keeps_identities() ? std::optional(marked_logs_here()) : std::nullopt);
}

void chat_session::welcome(std::string_view re, const std::optional<std::vector<marked_log>>& logs) {
    if (logs) {
        send(protocol::encode_welcome(user_, re, summarize(*logs)));
    } else {
        send(protocol::encode_welcome(user_, re));
    }
    if (const std::string& motd = worker_.settings().motd; !motd.empty()) {
        send(protocol::encode_system(motd));
    }
    welcomed_ = true;
    const chat_events& events = worker_.hub().rooms().events();
    if (events.wants(protocol::webhook_event::user_connected)) {
        events.emit(protocol::webhook_event::user_connected, {}, user_, {}, unix_millis());
    }
}

void chat_session::release_name(const std::string& user) {
    registry::user_registry& users = worker_.hub().users();
    users.unregister(user, handle_);
    if (cluster_link* cluster = worker_.hub().cluster(); cluster != nullptr && !users.lookup(user)) {
        cluster->release_name(user);
    }
}

void chat_session::refuse_login(std::string_view why, std::string_view re) {
    fail(error_code::unauthorized, why, re);
    // Whoever cannot prove a name gets nothing more from this connection.
    ended_ = true;
    output_.close(protocol::close_code::policy_violation, "unauthorized");
}

}  // namespace parley::rooms
