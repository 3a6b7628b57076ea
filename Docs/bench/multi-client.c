// A plain libcurl multi client for the HTTPS rows of Docs/Performance.md (Docs/Benchmark.md):
// the floor for FoundationNetworking's libcurl. Compiled by https-bench.sh at bench time, never
// part of the package.
//
//   multi-client -n N -c C [-w W] [--close] [--cacert FILE] [--no-capath] URL
//
// Keeps C transfers of URL in flight on one multi handle (its connection cache keeps
// connections alive) until N have finished, after W untimed ones; --close sends
// "Connection: close" so each transfer opens a new connection; --no-capath unsets libcurl's
// built-in CA directory (which turns its CA-store cache off: Docs/TLS.md, "What a connection costs"). Bodies are discarded. Prints
// one line: n= c= errors= secs= cpu_s= rps= cpu_us_per_req=.

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static size_t discard(char *data, size_t size, size_t count, void *user) {
    (void)data;
    (void)user;
    return size * count;
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

static double wall_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec + now.tv_nsec / 1e9;
}

/// Runs `total` transfers, `concurrency` at once; returns how many failed.
static int run(CURLM *multi, CURL **easies, int concurrency, int total) {
    int started = 0, finished = 0, errors = 0;
    for (int index = 0; index < concurrency && started < total; index++, started++) curl_multi_add_handle(multi, easies[index]);
    while (finished < total) {
        int running = 0;
        curl_multi_perform(multi, &running);
        CURLMsg *message;
        int left;
        while ((message = curl_multi_info_read(multi, &left)) != NULL) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *easy = message->easy_handle;
            long status = 0;
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
            if (message->data.result != CURLE_OK || status != 200) {
                if (errors++ == 0) fprintf(stderr, "multi-client: %s (HTTP %ld)\n", curl_easy_strerror(message->data.result), status);
            }
            finished++;
            curl_multi_remove_handle(multi, easy);
            if (started < total) {
                started++;
                curl_multi_add_handle(multi, easy);
            }
        }
        if (finished < total) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    return errors;
}

int main(int argc, char **argv) {
    int total = 1000, concurrency = 1, warmup = 50, close = 0, noCAPath = 0;
    const char *caFile = NULL, *url = NULL;
    for (int index = 1; index < argc; index++) {
        if (strcmp(argv[index], "-n") == 0 && index + 1 < argc) total = atoi(argv[++index]);
        else if (strcmp(argv[index], "-c") == 0 && index + 1 < argc) concurrency = atoi(argv[++index]);
        else if (strcmp(argv[index], "-w") == 0 && index + 1 < argc) warmup = atoi(argv[++index]);
        else if (strcmp(argv[index], "--cacert") == 0 && index + 1 < argc) caFile = argv[++index];
        else if (strcmp(argv[index], "--close") == 0) close = 1;
        else if (strcmp(argv[index], "--no-capath") == 0) noCAPath = 1;
        else url = argv[index];
    }
    if (url == NULL || total < 1 || concurrency < 1) {
        fprintf(stderr, "usage: multi-client -n N -c C [-w W] [--close] [--cacert FILE] [--no-capath] URL\n");
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *multi = curl_multi_init();
    CURL **easies = calloc(concurrency, sizeof(CURL *));
    struct curl_slist *headers = close ? curl_slist_append(NULL, "Connection: close") : NULL;
    for (int index = 0; index < concurrency; index++) {
        CURL *easy = curl_easy_init();
        curl_easy_setopt(easy, CURLOPT_URL, url);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
        if (caFile != NULL) curl_easy_setopt(easy, CURLOPT_CAINFO, caFile);
        if (noCAPath) curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
        if (headers != NULL) curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
        easies[index] = easy;
    }
    int errors = warmup > 0 ? run(multi, easies, concurrency, warmup) : 0;
    if (errors > 0) fprintf(stderr, "multi-client: warm-up: %d failed\n", errors);
    double cpu = cpu_seconds(), start = wall_seconds();
    errors = run(multi, easies, concurrency, total);
    double seconds = wall_seconds() - start;
    cpu = cpu_seconds() - cpu;
    printf("n=%d c=%d errors=%d secs=%.3f cpu_s=%.3f rps=%.1f cpu_us_per_req=%.1f\n", total, concurrency, errors, seconds, cpu,
           total / seconds, cpu / total * 1e6);
    return errors > 0 ? 1 : 0;
}
