// Dialogs on the native <dialog>: a modal, a confirmation before anything destructive, a secret shown once.
import { type ReactNode, useEffect, useId, useRef, useState } from "react";
import { useT } from "../i18n";
import { messages } from "../i18n/core";

/** A modal on the native <dialog>: opened while `open`, closed by Esc or its buttons. */
export function Modal({ title, open, onClose, children }: { title: string; open: boolean; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={id} onClose={onClose}>
      <h2 id={id}>{title}</h2>
      {open && children}
    </dialog>
  );
}

/** A button that asks before it acts (anything destructive). */
export function ConfirmButton({
  label,
  question,
  onConfirm,
  className = "danger",
}: {
  label: string;
  question: string;
  onConfirm: () => unknown;
  className?: string;
}) {
  const t = useT(messages);
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className={className} onClick={() => setOpen(true)}>
        {label}
      </button>
      <Modal title={t("confirmTitle")} open={open} onClose={() => setOpen(false)}>
        <p>{question}</p>
        <div className="buttons">
          <button type="button" onClick={() => setOpen(false)}>
            {t("cancel")}
          </button>
          <button
            type="button"
            className="danger"
            onClick={async () => {
              setOpen(false);
              await onConfirm();
            }}
          >
            {label}
          </button>
        </div>
      </Modal>
    </>
  );
}

/** A secret, key or token the server returns once. */
export function SecretModal({ title, value, onClose }: { title?: string; value: string | undefined; onClose: () => void }) {
  const t = useT(messages);
  const [copied, setCopied] = useState(false);
  return (
    <Modal title={title ?? t("secretTitle")} open={value !== undefined} onClose={onClose}>
      <p>{t("shownOnce")}</p>
      <output className="secret" data-testid="secret">
        {value}
      </output>
      <div className="buttons">
        <button
          type="button"
          onClick={async () => {
            await navigator.clipboard?.writeText(value ?? "").catch(() => {});
            setCopied(true);
          }}
        >
          {t("copy")}
        </button>
        <button type="button" onClick={onClose}>
          {t("close")}
        </button>
      </div>
      <p role="status">{copied ? t("copied") : ""}</p>
    </Modal>
  );
}
