;;; emacs_test.el --- eglot + Flymake end to end against the real server  -*- lexical-binding: t; -*-

;; Run by emacs_test.sh as `emacs -Q --batch -l emacs_test.el'.  Loads editors/emacs/preflight.el
;; (byte-compiled), opens a copy of buggy_train.py with `eglot-ensure' in `python-mode-hook' (as
;; a user would), waits until the TG001 diagnostic reaches Flymake, prints what arrived, shuts
;; the server down and exits 0 only if every check held.  Environment: PF_TEST_FILE,
;; PF_PREFLIGHT_ELC; the `preflight' first on PATH is the server under test (see lib.sh).

(require 'package)
;; Debian installs elpa-eglot under site-lisp/elpa, which only site-start (skipped by -Q) adds.
(when (file-directory-p "/usr/share/emacs/site-lisp/elpa")
  (add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa"))
(package-initialize)                    ; activates elpa-eglot (built in from Emacs 29)
(require 'eglot)
(require 'flymake)
(load (getenv "PF_PREFLIGHT_ELC") nil t t) ; editors/emacs/preflight.el, byte-compiled

(defconst pf-test-timeout 20 "Seconds to wait for each step.")

(defun pf-say (format-string &rest args)
  (princ (concat (apply #'format format-string args) "\n")))

(defun pf-wait-for (what predicate)
  "Pump the server connection until PREDICATE holds; fail naming WHAT after the timeout."
  (let ((deadline (+ (float-time) pf-test-timeout)) result)
    (while (and (not (setq result (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or result (error "Timed out waiting for %s" what))))

(defun pf-tg001 ()
  "The TG001 Flymake diagnostic of the current buffer, asking Flymake to collect first."
  (flymake-start)
  (cl-find-if (lambda (d) (string-match-p "TG001" (flymake-diagnostic-text d)))
              (flymake-diagnostics)))

(defun pf-diagnostic-source (d)
  (buffer-substring-no-properties (flymake-diagnostic-beg d) (flymake-diagnostic-end d)))

(defun pf-print-diagnostic (d)
  (pf-say "flymake: line %d, %s on `%s': %s"
          (line-number-at-pos (flymake-diagnostic-beg d))
          (flymake-diagnostic-type d)
          (pf-diagnostic-source d)
          (flymake-diagnostic-text d)))

(defun pf-run ()
  (pf-say "emacs %s, eglot %s" emacs-version
          (or (ignore-errors (package-version-join (package-desc-version (cadr (assq 'eglot package-alist)))))
              "built in"))
  (add-hook 'python-mode-hook #'eglot-ensure)
  (find-file (getenv "PF_TEST_FILE"))
  (unless (derived-mode-p 'python-mode) (error "Not in python-mode but %s" major-mode))
  (run-hooks 'post-command-hook)        ; eglot-ensure connects after the command loop's turn
  (let* ((server (pf-wait-for "eglot to connect" #'eglot-current-server))
         (diag (pf-wait-for "TG001 through flymake" #'pf-tg001))
         (all (flymake-diagnostics)))
    (pf-say "eglot: connected to %s (%s), managing %s"
            (plist-get (eglot--server-info server) :name)
            (mapconcat #'identity (process-command (jsonrpc--process server)) " ")
            (buffer-name))
    (pf-say "flymake: %d diagnostic(s)" (length all))
    (mapc #'pf-print-diagnostic all)
    (unless (eq (flymake-diagnostic-type diag) 'eglot-warning)
      (error "TG001 arrived as %s, not as a warning" (flymake-diagnostic-type diag)))
    ;; The line holds é, CJK and an emoji before the finding: a UTF-16 slip moves the region.
    (unless (equal (pf-diagnostic-source diag) "loss")
      (error "The TG001 region covers `%s', not `loss'" (pf-diagnostic-source diag)))
    (unless (string-match-p "backward" (flymake-diagnostic-text diag))
      (error "The TG001 message does not say what consumed the graph"))
    (eglot-shutdown server)
    (pf-say "eglot: server shut down")))

(defvar pf-publishes 0 "How many publishDiagnostics eglot has handled.")
(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest _)
              (when (eq method 'textDocument/publishDiagnostics) (cl-incf pf-publishes))))

(defun pf-run-ignoring ()
  "The project's .dir-locals.el sets `preflight-ignore'; preflight.el must send it, so the
server's first publish for the reopened file holds no TG001."
  (kill-buffer (current-buffer))
  (with-temp-file (expand-file-name ".dir-locals.el" (file-name-directory (getenv "PF_TEST_FILE")))
    (insert "((python-mode . ((preflight-ignore . (\"TG001\")))))\n"))
  (setq pf-publishes 0)
  (find-file (getenv "PF_TEST_FILE"))
  (run-hooks 'post-command-hook)
  (let ((server (pf-wait-for "eglot to reconnect" #'eglot-current-server)))
    (pf-wait-for "the server's first publish" (lambda () (> pf-publishes 0)))
    (flymake-start)
    (let ((all (flymake-diagnostics)))
      (pf-say "with preflight-ignore (\"TG001\") in .dir-locals.el: %d diagnostic(s)%s" (length all)
              (mapconcat (lambda (d) (concat ", " (car (split-string (flymake-diagnostic-text d) ":"))))
                         all ""))
      (when (cl-find-if (lambda (d) (string-match-p "TG001" (flymake-diagnostic-text d))) all)
        (error "TG001 is still reported with preflight-ignore set")))
    (eglot-shutdown server)))

(condition-case failure
    (progn
      (pf-run)
      (pf-run-ignoring)
      (pf-say "PASS: eglot received TG001 and Flymake shows it; preflight-ignore reaches the server")
      (kill-emacs 0))
  (error
   (pf-say "FAIL: %s" (error-message-string failure))
   (kill-emacs 1)))

;;; emacs_test.el ends here
