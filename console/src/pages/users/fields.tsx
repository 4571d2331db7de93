// The field groups the users' forms share: the username, the given and family name, an e-mail address or a phone
// number with "verified", each bound to a form's state and showing the server's error.
import { useT } from "../../i18n";
import { messages } from "../../i18n/users";
import { Checkbox, Field, type FormError } from "../../ui";

type State<V> = [V, (v: V) => void];

/** The username (a machine's has its own hint). */
export function UsernameField({ value: [v, set], error, hint }: { value: State<string>; error: FormError; hint?: string }) {
  const t = useT(messages);
  return (
    <Field label={t("username")} name="user.username" required autoComplete="off" hint={hint} value={v} onChange={(e) => set(e.target.value)} error={error} />
  );
}

/** Given and family name, under `prefix` ("user.human.profile." to create, "user.human." to change). */
export function NameFields({
  prefix,
  given: [g, setG],
  family: [f, setF],
  error,
}: {
  prefix: string;
  given: State<string>;
  family: State<string>;
  error: FormError;
}) {
  const t = useT(messages);
  return (
    <>
      <Field label={t("givenName")} name={`${prefix}given_name`} required value={g} onChange={(e) => setG(e.target.value)} error={error} />
      <Field label={t("familyName")} name={`${prefix}family_name`} required value={f} onChange={(e) => setF(e.target.value)} error={error} />
    </>
  );
}

/**
 * An e-mail address ("email") or phone number ("phone") of a human, and its "verified" checkbox when `verifiedLabel`
 * is given; `required` for an address, a number only where it says so.
 */
export function ContactFields({
  kind,
  label,
  value: [v, set],
  verified,
  verifiedLabel,
  required,
  hint,
  error,
}: {
  kind: "email" | "phone";
  label: string;
  value: State<string>;
  verified?: State<boolean>;
  verifiedLabel?: string;
  required?: boolean;
  hint?: string;
  error: FormError;
}) {
  const field = kind === "email" ? "user.human.email.address" : "user.human.phone.number";
  return (
    <>
      <Field
        label={label}
        name={field}
        type={kind === "email" ? "email" : "tel"}
        required={required}
        hint={hint}
        value={v}
        onChange={(e) => set(e.target.value)}
        error={error}
      />
      {verified && verifiedLabel && <Checkbox label={verifiedLabel} name={`user.human.${kind}.is_verified`} checked={verified[0]} onChange={verified[1]} />}
    </>
  );
}
