;;; preflight.el --- preflight language server for eglot and lsp-mode  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1"))
;; Keywords: languages, tools

;;; Commentary:

;; Registers `preflight lsp' -- which finds silent, expensive bugs in PyTorch training code
;; and estimates peak VRAM -- with whichever LSP client is loaded:
;;
;; - eglot (built in from Emacs 29; the elpa-eglot package before): preflight becomes the
;;   eglot server of `python-mode' and `python-ts-mode'.  `M-x eglot' or
;;   (add-hook 'python-mode-hook #'eglot-ensure) starts it; findings appear through Flymake.
;; - lsp-mode: preflight is an add-on client, so it runs next to pyright or pylsp.
;;
;; The `preflight-*' options below reach the server as initializationOptions and as the
;; "preflight" section of workspace/configuration; they may be set per project in
;; .dir-locals.el.  Empty options are not sent, so the project's pyproject.toml applies.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'eieio)                        ; `defclass' below runs only once eglot is loaded

(defgroup preflight nil
  "PyTorch training-code checks from the preflight language server."
  :group 'tools
  :prefix "preflight-")

(defcustom preflight-executable "preflight"
  "The preflight executable: an absolute file name or a name on `exec-path'."
  :type 'string)

(defcustom preflight-select nil
  "Rule codes to run, e.g. (\"TG001\" \"TG003\"); nil runs the configured or all rules."
  :type '(repeat string)
  :safe (lambda (v) (and (listp v) (cl-every #'stringp v))))

(defcustom preflight-ignore nil
  "Rule codes never to run; wins over `preflight-select'."
  :type '(repeat string)
  :safe (lambda (v) (and (listp v) (cl-every #'stringp v))))

(defcustom preflight-target-gpu nil
  "GPU the VRAM estimate is judged against, e.g. \"a100-80gb\"; nil for the default."
  :type '(choice (const :tag "Default" nil) string)
  :safe (lambda (v) (or (null v) (stringp v))))

(defcustom preflight-eglot-register t
  "Non-nil: loading eglot makes preflight the eglot server of Python buffers.
eglot runs one server per buffer; set this to nil before loading
preflight to keep another Python server, and start preflight with
\\[universal-argument] \\[eglot] when wanted."
  :type 'boolean)

(defun preflight-server-settings ()
  "The server options as a JSON-ready plist (a hash table when all are unset)."
  (let ((settings (append
                   (when preflight-select (list :select (vconcat preflight-select)))
                   (when preflight-ignore (list :ignore (vconcat preflight-ignore)))
                   (when (and preflight-target-gpu (not (string-empty-p preflight-target-gpu)))
                     (list :targetGpu preflight-target-gpu)))))
    ;; An empty plist would be serialised as null; the server expects an object.
    (or settings (make-hash-table))))

(defun preflight-server-command ()
  "The command line that starts the server."
  (list preflight-executable "lsp"))

;;;; eglot

(declare-function eglot--project "eglot")
(declare-function eglot--uri-to-path "eglot")
(declare-function project-root "project")
(defvar eglot-server-programs)
;; Defined by the `defclass' below, which the byte compiler sees only inside the
;; `with-eval-after-load' form.
(declare-function preflight-eglot-server--eieio-childp "preflight")

(defun preflight--settings-in (directory)
  "`preflight-server-settings' with DIRECTORY's .dir-locals.el applied."
  (with-temp-buffer
    (setq default-directory (file-name-as-directory directory))
    (setq-local major-mode 'python-mode)
    (hack-dir-local-variables-non-file-buffer)
    (preflight-server-settings)))

(with-eval-after-load 'eglot
  (defclass preflight-eglot-server (eglot-lsp-server) ()
    :documentation "The preflight language server.")

  (cl-defmethod eglot-initialization-options ((server preflight-eglot-server))
    (preflight--settings-in (project-root (eglot--project server))))

  ;; Answer the server's pull of the "preflight" section from the options above, whatever
  ;; `eglot-workspace-configuration' holds for other servers.
  (cl-defmethod eglot-handle-request
    ((server preflight-eglot-server) (_method (eql workspace/configuration)) &key items)
    (apply #'vector
           (mapcar (lambda (item)
                     (when (equal (plist-get item :section) "preflight")
                       (let ((scope (eglot--uri-to-path (or (plist-get item :scopeUri) ""))))
                         (preflight--settings-in
                          (if (file-directory-p scope) scope (project-root (eglot--project server)))))))
                   items)))

  (when preflight-eglot-register
    (add-to-list 'eglot-server-programs
                 `((python-mode python-ts-mode)
                   . ,(lambda (&optional _interactive)
                        (cons 'preflight-eglot-server (preflight-server-command)))))))

;;;; lsp-mode

(declare-function lsp-register-client "lsp-mode")
(declare-function make-lsp-client "lsp-mode")
(declare-function lsp-stdio-connection "lsp-mode")
(declare-function lsp-activate-on "lsp-mode")
(declare-function lsp-register-custom-settings "lsp-mode")

(defun preflight--select-setting ()
  (and preflight-select (vconcat preflight-select)))

(defun preflight--ignore-setting ()
  (and preflight-ignore (vconcat preflight-ignore)))

(defun preflight--target-gpu-setting ()
  (and preflight-target-gpu (not (string-empty-p preflight-target-gpu)) preflight-target-gpu))

(with-eval-after-load 'lsp-mode
  ;; Functions rather than the variables: lsp-mode sends a Lisp list as neither a JSON array
  ;; nor omits it, and these leave unset options out so pyproject.toml applies.  lsp-mode
  ;; answers the server's workspace/configuration pull (sent after `initialized') from them.
  (lsp-register-custom-settings
   '(("preflight.select" preflight--select-setting)
     ("preflight.ignore" preflight--ignore-setting)
     ("preflight.targetGpu" preflight--target-gpu-setting)))
  (lsp-register-client
   (make-lsp-client
    :new-connection (lsp-stdio-connection #'preflight-server-command)
    :activation-fn (lsp-activate-on "python")
    :server-id 'preflight
    :add-on? t                          ; alongside the Python language server
    :priority -2
    :initialization-options #'preflight-server-settings)))

(provide 'preflight)
;;; preflight.el ends here
