/*===- cohere2c/runtime.h - The runtime's C API ---------------------------===*
 *
 * Loads a model compiled by cohere2c-compile (OUT.so) with its weights and
 * serves requests on it with continuous batching over a paged KV cache, in
 * the style of IREE's runtime API: opaque handles created and released in
 * pairs, a status returned by every call that can fail, outputs through
 * out_ parameters. C11; the same header serves C++.
 *
 *   cohere2c_artifact_t  the compiled model (code, manifest, tokenizer and
 *                        chat template) and, once bound, its weights.
 *   cohere2c_engine_t    scheduler + KV cache + the executor of the
 *                        artifact's target (host or cuda), chosen here.
 *   cohere2c_request_t   one submitted request: its generated tokens, its
 *                        state and, if asked for, its logits.
 *   cohere2c_text_t      the model's tokenizer and chat template, from an
 *                        artifact or a checkpoint folder.
 *   cohere2c_decoder_t   turns one sequence's ids into text as they come.
 *
 * A typical run:
 *
 *   cohere2c_artifact_open("model.so", &artifact);
 *   cohere2c_artifact_load_weights(artifact, NULL);   // model.weights
 *   cohere2c_engine_create(artifact, NULL, &engine);
 *   cohere2c_engine_submit(engine, &request_options, &request);
 *   do cohere2c_engine_step(engine); while (!finished);  // request_state
 *   cohere2c_request_generated_ids(request, &ids, &count);
 *   ... release request, engine, artifact (any order).
 *
 * Errors: a call that fails returns a non-NULL cohere2c_status_t whose
 * message names the file, field or request and what was expected and
 * found; its out_ parameters are then left unchanged. The caller frees every
 * status with cohere2c_status_free. No call aborts on bad input.
 *
 * Memory: ids and text the API allocates for the caller are freed with
 * cohere2c_free; pointers into a handle's state are valid as each function
 * says. Handles are reference counted (IREE's retain/release): a request
 * keeps its engine alive and an engine its artifact, so they may be
 * released in any order.
 *
 *===----------------------------------------------------------------------===*/
#ifndef COHERE2C_RUNTIME_H
#define COHERE2C_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Status
 *===----------------------------------------------------------------------===*/

typedef enum cohere2c_status_code_e {
  COHERE2C_STATUS_OK = 0,
  /* What the caller passed is wrong: a NULL handle or pointer, an option out
   * of range, a file (artifact, weights, checkpoint) that is missing or
   * malformed, a request the engine refuses, text the tokenizer or a chat
   * the template rejects. */
  COHERE2C_STATUS_INVALID_ARGUMENT = 3,
  /* The handle is not in a state for the call: an engine of an artifact
   * without weights, the text of an artifact without a tokenizer, a chat
   * call on text without a chat template. */
  COHERE2C_STATUS_FAILED_PRECONDITION = 9,
  /* The target failed while running a step (a kernel or driver error, a
   * request the KV cache no longer holds even alone). */
  COHERE2C_STATUS_INTERNAL = 13,
} cohere2c_status_code_t;

/* NULL is OK; anything else is an error the caller owns. */
typedef struct cohere2c_status_s *cohere2c_status_t;

/* Whether `status` is OK (NULL). */
bool cohere2c_status_is_ok(cohere2c_status_t status);
/* COHERE2C_STATUS_OK for NULL, else the error's code. */
cohere2c_status_code_t cohere2c_status_code(cohere2c_status_t status);
/* The error's message, NUL-terminated UTF-8 ("" for OK); valid until
 * cohere2c_status_free(status). */
const char *cohere2c_status_message(cohere2c_status_t status);
/* Frees `status`; NULL is allowed. */
void cohere2c_status_free(cohere2c_status_t status);

/* Frees ids and text that a cohere2c_* call allocated for the caller (the
 * out_ids and out_text parameters); NULL is allowed. */
void cohere2c_free(void *pointer);

/*===----------------------------------------------------------------------===*
 * Artifact
 *
 * Thread-safety: open and load_weights must not run while another call
 * uses the artifact; after load_weights the artifact is immutable, and its
 * info, text and engine_create calls, retain and release are safe from many
 * threads at once.
 *===----------------------------------------------------------------------===*/

typedef struct cohere2c_artifact_t cohere2c_artifact_t;

/* Opens the shared library at `path` (NUL-terminated) written by
 * cohere2c-compile, checks its manifest and loads the text files the
 * compiler copied into it (tokenizer.json, chat template,
 * generation_config.json); no weights yet. *out_artifact holds one
 * reference. Errors (INVALID_ARGUMENT, naming `path`): no such file, not a
 * 64-bit ELF shared library, truncated, no or a malformed manifest, text
 * files that do not parse. */
cohere2c_status_t cohere2c_artifact_open(const char *path,
                                         cohere2c_artifact_t **out_artifact);

/* Where the weights of a library at `artifact_path` are by default:
 * OUT.weights beside OUT.so (the path with its extension replaced). The
 * NUL-terminated path is freed with cohere2c_free. Errors: NULL arguments
 * (INVALID_ARGUMENT). */
cohere2c_status_t cohere2c_artifact_default_weights_path(
    const char *artifact_path, char **out_path);

typedef enum cohere2c_weights_source_e {
  /* The weights file cohere2c-compile wrote beside the library
   * (cohere2c_artifact_default_weights_path), memory-mapped. */
  COHERE2C_WEIGHTS_FROM_WEIGHTS_FILE = 0,
  /* A Hugging Face checkpoint folder (config.json + safetensors, single or
   * sharded), packed into the layout the code reads. */
  COHERE2C_WEIGHTS_FROM_CHECKPOINT = 1,
  /* Seeded random weights of the model's shapes (for tests and benchmarks). */
  COHERE2C_WEIGHTS_RANDOM = 2,
} cohere2c_weights_source_t;

typedef struct cohere2c_weights_options_t {
  cohere2c_weights_source_t source;
  /* COHERE2C_WEIGHTS_FROM_CHECKPOINT: the folder, NUL-terminated. */
  const char *checkpoint_path;
  /* COHERE2C_WEIGHTS_RANDOM: the seed. */
  uint64_t random_seed;
} cohere2c_weights_options_t;

/* The defaults: the weights file beside the library. */
void cohere2c_weights_options_initialize(
    cohere2c_weights_options_t *out_options);

/* Binds the weights `options` names (NULL: the defaults) to `artifact`;
 * once per artifact, before its first engine. Errors (INVALID_ARGUMENT,
 * naming the file or tensor): a missing or unreadable weights file
 * ("pass --checkpoint DIR or --random-weights SEED" for a library compiled
 * from a config alone), one written for another library, a checkpoint
 * missing a tensor or with one of the wrong shape or dtype;
 * FAILED_PRECONDITION: weights already bound. */
cohere2c_status_t
cohere2c_artifact_load_weights(cohere2c_artifact_t *artifact,
                               const cohere2c_weights_options_t *options);

/* Reference counting; release frees the artifact (and unmaps its library
 * and weights) with the last reference. NULL is allowed. */
void cohere2c_artifact_retain(cohere2c_artifact_t *artifact);
void cohere2c_artifact_release(cohere2c_artifact_t *artifact);

typedef struct cohere2c_artifact_info_t {
  /* "host" or "cuda", NUL-terminated; valid while the artifact lives. */
  const char *target;
  /* Rows of the logits are vocab_size f32 values. */
  int64_t vocab_size;
  /* The context: prompt + generated tokens of a request, in tokens. */
  int64_t max_position_embeddings;
  /* Whether cohere2c_artifact_text works (the library was compiled from a
   * checkpoint folder with tokenizer.json), and whether a chat template
   * came with it. */
  bool has_tokenizer;
  bool has_chat_template;
  /* Whether cohere2c_artifact_load_weights succeeded. */
  bool has_weights;
} cohere2c_artifact_info_t;

/* Errors: NULL arguments (INVALID_ARGUMENT). */
cohere2c_status_t cohere2c_artifact_info(const cohere2c_artifact_t *artifact,
                                         cohere2c_artifact_info_t *out_info);

/*===----------------------------------------------------------------------===*
 * Text: the model's tokenizer and chat template, as Hugging Face
 * transformers applies them, from a compiled artifact or a checkpoint
 * folder. Ids are int32 token ids in [0, vocab_size); text is UTF-8 with an
 * explicit length (it may hold NUL), and text the API returns is also
 * NUL-terminated.
 *
 * Thread-safety: a text handle is immutable; every call on it, retain and
 * release are safe from many threads at once.
 *===----------------------------------------------------------------------===*/

typedef struct cohere2c_text_t cohere2c_text_t;

/* The text of `path` (NUL-terminated): a checkpoint folder (tokenizer.json,
 * and tokenizer_config.json, generation_config.json, chat template files
 * where present) or a library cohere2c-compile wrote (the text files the
 * compiler copied into it: the library is opened and its manifest checked
 * as cohere2c_artifact_open does, so one of another format version is
 * refused; its weights are not read). *out_text holds one reference.
 * Errors (INVALID_ARGUMENT, naming the file or field): no such folder or
 * file, a library that does not open (cohere2c_artifact_open's errors) or
 * carries no tokenizer, no tokenizer.json, text files that do not parse. */
cohere2c_status_t cohere2c_text_open(const char *path,
                                     cohere2c_text_t **out_text);

/* The text of `artifact`, sharing what the artifact loaded; *out_text
 * holds one reference and stays valid after the artifact is released.
 * Errors: the artifact carries no tokenizer (FAILED_PRECONDITION). */
cohere2c_status_t cohere2c_artifact_text(const cohere2c_artifact_t *artifact,
                                         cohere2c_text_t **out_text);

/* Reference counting; NULL is allowed. */
void cohere2c_text_retain(cohere2c_text_t *text);
void cohere2c_text_release(cohere2c_text_t *text);

/* The ids of `utf8` (`length` bytes): tokenizer(utf8, add_special_tokens)
 * (with special tokens: the BOS as the post-processor adds it, as
 * cohere2c-run --prompt encodes). *out_ids ([*out_count] int32) is freed
 * with cohere2c_free. Errors: text that is not UTF-8 (INVALID_ARGUMENT). */
cohere2c_status_t cohere2c_text_encode(const cohere2c_text_t *text,
                                       const char *utf8, size_t length,
                                       bool add_special_tokens,
                                       int32_t **out_ids, size_t *out_count);

/* decode(ids[0..count), skip_special_tokens): *out_utf8 (*out_length
 * bytes) is freed with cohere2c_free. Errors: an id the tokenizer does not
 * know (INVALID_ARGUMENT, naming it). */
cohere2c_status_t cohere2c_text_decode(const cohere2c_text_t *text,
                                       const int32_t *ids, size_t count,
                                       bool skip_special_tokens,
                                       char **out_utf8, size_t *out_length);

/* apply_chat_template(tokenize=False): `chat_json` (NUL-terminated) is a
 * JSON object with "messages" (an array of objects with a string "role")
 * and optionally "documents" and "tools" (arrays); the special tokens of
 * tokenizer_config.json are the template's variables. *out_utf8 is freed
 * with cohere2c_free. Errors (INVALID_ARGUMENT): chat_json that is not such
 * an object (naming the field), the template's render errors (e.g. roles
 * that do not alternate); no chat template (FAILED_PRECONDITION). */
cohere2c_status_t cohere2c_text_render_chat(const cohere2c_text_t *text,
                                            const char *chat_json,
                                            bool add_generation_prompt,
                                            char **out_utf8,
                                            size_t *out_length);

/* cohere2c_text_render_chat, then encoded WITHOUT special tokens (the
 * template writes the BOS itself). *out_ids is freed with cohere2c_free.
 * Errors: render_chat's. */
cohere2c_status_t cohere2c_text_encode_chat(const cohere2c_text_t *text,
                                            const char *chat_json,
                                            bool add_generation_prompt,
                                            int32_t **out_ids,
                                            size_t *out_count);

/* Decodes one sequence's ids as they are generated, for streaming: the
 * pieces push returns, joined with finish's, equal cohere2c_text_decode
 * of all the ids pushed, and none ends inside a UTF-8 character.
 * Thread-safety: none; one decoder per sequence. It keeps its text alive. */
typedef struct cohere2c_decoder_t cohere2c_decoder_t;

/* Errors: NULL arguments (INVALID_ARGUMENT). */
cohere2c_status_t cohere2c_decoder_create(cohere2c_text_t *text,
                                          bool skip_special_tokens,
                                          cohere2c_decoder_t **out_decoder);
/* The text `id` completes (possibly empty), freed with cohere2c_free.
 * Errors: an unknown id (INVALID_ARGUMENT), which changes nothing. */
cohere2c_status_t cohere2c_decoder_push(cohere2c_decoder_t *decoder,
                                        int32_t id, char **out_text,
                                        size_t *out_length);
/* What is held back at the end (an unfinished character, as U+FFFD),
 * freed with cohere2c_free; the decoder is then ready for a new sequence. */
cohere2c_status_t cohere2c_decoder_finish(cohere2c_decoder_t *decoder,
                                          char **out_text, size_t *out_length);
void cohere2c_decoder_release(cohere2c_decoder_t *decoder);

/*===----------------------------------------------------------------------===*
 * Engine: continuous batching. Requests are admitted in submission order
 * while the batch has room and the KV cache has blocks; each step computes
 * a prefill chunk or a decode token of every running request and samples;
 * when blocks run out the most recently admitted request is preempted and
 * recomputed later (nothing is lost). Running requests stay in submission
 * order. The KV cache persists across requests, so a later request reuses
 * the cached prefix of an earlier one.
 *
 * Thread-safety: an engine and its requests are used by one thread at a
 * time (the caller serializes); distinct engines may run in parallel. The
 * exception is cohere2c_engine_validate, which reads only what create fixed
 * and may be called from any thread while another uses the engine.
 *===----------------------------------------------------------------------===*/

typedef struct cohere2c_engine_t cohere2c_engine_t;

typedef struct cohere2c_engine_options_t {
  /* Tokens per KV block, in [1, 65536]. Default 16. */
  int64_t block_size;
  /* Blocks in the KV pool (a block: block_size tokens of the layers of one
   * KV group; every group draws from the pool, a sliding-window group only
   * for the tokens in its window), in [0, 2^31 - 1]; 0 (the default):
   * on the cuda target, what gpu_memory_utilization leaves beyond the
   * weights and the activations; on the host target, room for max_batch
   * sequences of the whole context, at most 4 GiB of KV cache. */
  int64_t kv_blocks;
  /* Most prompt tokens of one request per step (chunked prefill); 0 (the
   * default): the whole prompt. */
  int64_t prefill_chunk;
  /* Most requests in flight, in [1, 65536]. Default 1. */
  int64_t max_batch;
  /* Most tokens of one step, decode tokens first, then prompt chunks
   * (vLLM's max_num_batched_tokens), in [max_batch, 2^31 - 1]. Default
   * 8192. The cuda target reserves the activations of such a step. */
  int64_t max_num_batched_tokens;
  /* cuda: the fraction of the device's memory the engine may take, what
   * other processes hold included, in (0, 1]. Default 0.9. */
  double gpu_memory_utilization;
  /* Reuse the KV blocks of cached prefixes across requests. Default true. */
  bool prefix_cache;
  /* Keep generating past the EOS ids for every request. Default false. */
  bool ignore_eos;
  /* The token ids that end a request, [eos_token_count] int64, copied at
   * create; NULL (the default): the model's (generation_config.json's
   * eos_token_id, else config.json's). */
  const int64_t *eos_token_ids;
  size_t eos_token_count;
} cohere2c_engine_options_t;

void cohere2c_engine_options_initialize(cohere2c_engine_options_t *out_options);

/* An engine for `artifact` (which it keeps alive) on the executor of the
 * artifact's target: reads the weights (a cuda engine streams them to the
 * device in bounded host memory, or generates random ones there) and
 * allocates the KV cache. A cuda engine names its device and how it split
 * the device's memory on stderr. `options` NULL: the defaults. Errors:
 * options out of range (INVALID_ARGUMENT, naming the option); an artifact
 * without weights (FAILED_PRECONDITION); the weights' read errors (naming
 * the file and tensor); the executor's (no GPU or driver for a cuda
 * artifact, a model that does not fit the device, saying what it needs,
 * memory that cannot be allocated: INTERNAL). */
cohere2c_status_t
cohere2c_engine_create(cohere2c_artifact_t *artifact,
                       const cohere2c_engine_options_t *options,
                       cohere2c_engine_t **out_engine);
void cohere2c_engine_retain(cohere2c_engine_t *engine);
void cohere2c_engine_release(cohere2c_engine_t *engine);

/* The options in force: kv_blocks as resolved when 0 was asked for, and
 * the EOS ids in force (NULL: config.json's, for an artifact without text);
 * pointers valid while the engine lives. */
cohere2c_status_t
cohere2c_engine_options(const cohere2c_engine_t *engine,
                        cohere2c_engine_options_t *out_options);

/* Since the engine was created. A prefill step computes a prompt token or
 * several tokens of one sequence (a chunk, also of generated tokens
 * recomputed after a preemption), a decode step one generated token per
 * sequence; tokens and times are counted by the kind of their step, so
 * tokens / time is each kind's rate. */
typedef struct cohere2c_engine_stats_t {
  int64_t steps;
  int64_t prefill_tokens;
  int64_t decode_tokens;
  /* Evictions of a sequence that had computed tokens since its admission. */
  int64_t preemptions;
  /* Milliseconds of wall time in steps of each kind. */
  double prefill_ms;
  double decode_ms;
  /* Most bytes of KV blocks referenced by live sequences at once. */
  int64_t peak_kv_bytes;
} cohere2c_engine_stats_t;

cohere2c_status_t cohere2c_engine_stats(const cohere2c_engine_t *engine,
                                        cohere2c_engine_stats_t *out_stats);

/* What the engine holds now: requests running (admitted, with KV blocks)
 * and waiting (submitted, not yet admitted), its KV groups (layers of one
 * window, groups of equal size: cohere2c_engine_kv_group) and the free
 * blocks of the KV pool they share (neither used nor cached). */
typedef struct cohere2c_engine_load_t {
  int64_t running;
  int64_t waiting;
  size_t kv_groups;
  int64_t free_kv_blocks;
} cohere2c_engine_load_t;

cohere2c_status_t cohere2c_engine_load(const cohere2c_engine_t *engine,
                                       cohere2c_engine_load_t *out_load);

/* The blocks of the KV pool one KV group holds: used (in some sequence's
 * block table) and evictable (unreferenced, kept for prefix reuse until
 * needed); kv_blocks = free_kv_blocks + the used and evictable blocks of
 * every group. name ("full", "sliding4096", or "sliding4096.1" where a
 * window's layers are split over several groups) is valid while the
 * engine lives. Errors (INVALID_ARGUMENT): group >= kv_groups. */
typedef struct cohere2c_kv_group_t {
  const char *name;
  int64_t used_blocks;
  int64_t evictable_blocks;
} cohere2c_kv_group_t;

cohere2c_status_t cohere2c_engine_kv_group(const cohere2c_engine_t *engine,
                                           size_t group,
                                           cohere2c_kv_group_t *out_group);

/* Whether a request waits or runs (a step would do work). */
cohere2c_status_t cohere2c_engine_has_work(const cohere2c_engine_t *engine,
                                           bool *out_has_work);

/* One step of continuous batching: admits waiting requests, computes a
 * chunk of every running one, samples, and updates the requests' tokens
 * and states. A step without work does nothing. Errors (INTERNAL): the
 * executor's; a request too large for the KV cache even alone (raise
 * kv_blocks). The engine's requests are then in an unspecified state:
 * release them. */
cohere2c_status_t cohere2c_engine_step(cohere2c_engine_t *engine);

/*===----------------------------------------------------------------------===*
 * Requests
 *===----------------------------------------------------------------------===*/

typedef struct cohere2c_request_t cohere2c_request_t;

typedef struct cohere2c_request_options_t {
  /* Names the request in errors, NUL-terminated; NULL: "". */
  const char *id;
  /* [prompt_length] token ids in [0, vocab_size); copied at submit. */
  const int32_t *prompt_ids;
  size_t prompt_length;
  /* Most tokens to generate, >= 1; prompt_length + max_new_tokens - 1
   * must fit max_position_embeddings. Default 16. */
  int64_t max_new_tokens;
  /* Sampling: temperature 0 (the default) is greedy (the lowest id among
   * equal maxima); top_k 0 and top_p 1 (the defaults) keep every token
   * (top-p: Holtzman et al., 2019). The random stream is the request's own
   * (seed), so it samples the same tokens whatever it is batched with. At a
   * temperature without top-k or top-p a token is the argmax of logit / T
   * plus seeded Gumbel noise, which the GPU computes for the whole batch. */
  double temperature;
  int64_t top_k;
  double top_p;
  uint64_t seed;
  /* Keep generating past the EOS ids, for this request alone. */
  bool ignore_eos;
  /* Keep the logits of every computed position from record_logits_from on
   * (cohere2c_request_logits). */
  bool record_logits;
  int64_t record_logits_from;
  /* -1 (the default): no log probabilities; 0 to
   * COHERE2C_MAX_TOP_LOGPROBS: each generated token's log probability and
   * this many most likely tokens at its position (cohere2c_request_logprobs). */
  int32_t top_logprobs;
} cohere2c_request_options_t;

#define COHERE2C_MAX_TOP_LOGPROBS 20

void cohere2c_request_options_initialize(
    cohere2c_request_options_t *out_options);

/* Queues a copy of the request behind the waiting ones; nothing runs until
 * cohere2c_engine_step. *out_request holds one reference and keeps the
 * engine alive. Errors (INVALID_ARGUMENT, naming the request id and the
 * value): an empty prompt, an id outside [0, vocab_size), prompt +
 * max_new_tokens - 1 past max_position_embeddings, sampling values out of
 * range, or a request that would not fit the KV cache even alone (naming
 * the blocks it needs and the KV group). */
cohere2c_status_t
cohere2c_engine_submit(cohere2c_engine_t *engine,
                       const cohere2c_request_options_t *options,
                       cohere2c_request_t **out_request);

/* Whether submit would accept the request, without queueing it: NULL, or
 * the status submit would return. Safe from any thread (see Engine). */
cohere2c_status_t
cohere2c_engine_validate(const cohere2c_engine_t *engine,
                         const cohere2c_request_options_t *options);

typedef enum cohere2c_request_state_e {
  COHERE2C_REQUEST_IN_FLIGHT = 0, /* waiting or running */
  COHERE2C_REQUEST_FINISHED = 1,  /* max_new_tokens or an EOS id reached */
  COHERE2C_REQUEST_CANCELLED = 2,
} cohere2c_request_state_t;

cohere2c_status_t cohere2c_request_state(const cohere2c_request_t *request,
                                         cohere2c_request_state_t *out_state);

/* The tokens generated so far, in order: *out_ids points to [*out_count]
 * int32 ids owned by the request, valid until the next step of its engine
 * or its release. Tokens are final once reported (a preempted request
 * recomputes them but never samples them again), so a caller streams a
 * request by reading the ids past those it has seen after each step. */
cohere2c_status_t
cohere2c_request_generated_ids(const cohere2c_request_t *request,
                               const int32_t **out_ids, size_t *out_count);

typedef struct cohere2c_request_stats_t {
  /* Prompt tokens whose KV came from the prefix cache at first admission. */
  int64_t cached_tokens;
  /* Milliseconds from submission to the first generated token (TTFT; -1
   * before it) and to the end (0 before it). */
  double ttft_ms;
  double total_ms;
} cohere2c_request_stats_t;

cohere2c_status_t cohere2c_request_stats(const cohere2c_request_t *request,
                                         cohere2c_request_stats_t *out_stats);

/* A finished request's recorded logits: *out_logits points to [*out_rows,
 * vocab_size] f32 values, row-major, owned by the request (valid until its
 * release); row i is the distribution of the token at sequence position
 * *out_first_row + i + 1. Rows cover positions [first_row, P + N - 1) of
 * the prompt's P and the N generated tokens (the last one is never fed
 * back); first_row is the larger of record_logits_from and cached_tokens
 * (positions before the latter were served from the cache). A request
 * submitted without record_logits has 0 rows. Errors: FAILED_PRECONDITION
 * if the request has not finished. */
cohere2c_status_t cohere2c_request_logits(const cohere2c_request_t *request,
                                          const float **out_logits,
                                          int64_t *out_rows,
                                          int64_t *out_first_row);

/* The log probabilities of generated token `index` (< the count of
 * cohere2c_request_generated_ids) of a request submitted with
 * top_logprobs >= 0: *out_logprob, the token's log probability under the
 * model's distribution at its position (log-softmax of the logits, before
 * temperature, top-k and top-p, as vLLM reports them), and the
 * *out_top_count (= top_logprobs) most likely tokens there, most likely
 * first (ties: lower id first), copied into out_top_ids and
 * out_top_logprobs, each of room for `capacity` values. Errors
 * (INVALID_ARGUMENT): index out of range, capacity < top_logprobs;
 * (FAILED_PRECONDITION): submitted without top_logprobs. */
cohere2c_status_t cohere2c_request_logprobs(const cohere2c_request_t *request,
                                            size_t index, float *out_logprob,
                                            int32_t *out_top_ids,
                                            float *out_top_logprobs,
                                            size_t capacity,
                                            size_t *out_top_count);

/* Ends the request wherever it is (waiting or running), freeing its KV
 * blocks (its full blocks stay cached); its state becomes CANCELLED and its
 * tokens so far stay readable. A finished or cancelled request is no
 * error. */
cohere2c_status_t cohere2c_request_cancel(cohere2c_request_t *request);

/* Release cancels a request still in flight with the last reference. NULL
 * is allowed. */
void cohere2c_request_retain(cohere2c_request_t *request);
void cohere2c_request_release(cohere2c_request_t *request);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* COHERE2C_RUNTIME_H */
