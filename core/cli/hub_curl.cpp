// libcurl behind hub.h's HttpGet: the CLI's only network call. One GET, no redirects followed
// (hub.cpp decides where a redirect may take the token), through the proxy hub.cpp chose and no
// other (curl's own reading of the proxy variables is switched off), http and https only, the
// time, the body and the headers capped.

#include <curl/curl.h>

#include <cctype>
#include <mutex>

#include "cli/hub.h"

namespace gpumem::cli {

namespace {

struct Transfer {
    HttpResponse response;
    std::size_t max_bytes = 0;
    std::size_t header_bytes = 0;
    bool too_large = false;
    bool headers_too_large = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const std::size_t n = size * count;
    if (t->response.body.size() + n > t->max_bytes) {
        t->too_large = true;
        return 0;  // stops the transfer (CURLE_WRITE_ERROR)
    }
    t->response.body.append(data, n);
    return n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const std::size_t n = size * count;
    t->header_bytes += n;
    if (t->header_bytes > kMaxHeaderBytes) {
        t->headers_too_large = true;
        return 0;  // stops the transfer
    }
    const std::string line(data, n);
    const std::size_t colon = line.find(':');
    if (line.rfind("HTTP/", 0) == 0) t->response.headers.clear();  // a new response (e.g. after 100)
    else if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::string value = line.substr(colon + 1);
        const std::size_t a = value.find_first_not_of(" \t");
        const std::size_t b = value.find_last_not_of(" \t\r\n");
        t->response.headers[name] = a == std::string::npos ? "" : value.substr(a, b - a + 1);
    }
    return n;
}

}  // namespace

HttpGet curl_http_get() {
    static std::once_flag init;
    std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    return [](const HttpRequest& request) {
        Transfer t;
        t.max_bytes = request.max_bytes;
        CURL* curl = curl_easy_init();
        if (curl == nullptr) {
            t.response.failure = HttpResponse::Failure::Network;
            t.response.detail = "libcurl could not start";
            return t.response;
        }
        curl_slist* list = nullptr;
        for (const std::string& h : request.headers) list = curl_slist_append(list, h.c_str());
        char error[CURL_ERROR_SIZE] = "";
        curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
        curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, request.timeout_ms);
        curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, request.timeout_ms);
        // This proxy or none ("" disables it), and no NO_PROXY list of curl's own: hub.cpp applied it.
        curl_easy_setopt(curl, CURLOPT_PROXY, request.proxy.c_str());
        curl_easy_setopt(curl, CURLOPT_NOPROXY, "");
        curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // gzip if the server offers it
        curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(request.max_bytes));
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
        curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
        const CURLcode code = curl_easy_perform(curl);
        long status = 0;
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
        curl_slist_free_all(list);
        curl_easy_cleanup(curl);
        t.response.status = static_cast<int>(status);
        if (code == CURLE_OK) return t.response;
        t.response.detail = *error != '\0' ? error : curl_easy_strerror(code);
        if (t.headers_too_large) {
            t.response.detail = "its headers were larger than 64 KiB";
            t.response.failure = HttpResponse::Failure::Network;
        } else if (t.too_large || code == CURLE_FILESIZE_EXCEEDED) t.response.failure = HttpResponse::Failure::TooLarge;
        else if (code == CURLE_OPERATION_TIMEDOUT) t.response.failure = HttpResponse::Failure::Timeout;
        else if (code == CURLE_COULDNT_RESOLVE_PROXY || (!request.proxy.empty() && code == CURLE_COULDNT_CONNECT))
            t.response.failure = HttpResponse::Failure::Proxy;
        else t.response.failure = HttpResponse::Failure::Network;
        return t.response;
    };
}

}  // namespace gpumem::cli
