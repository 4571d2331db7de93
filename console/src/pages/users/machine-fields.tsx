// The inputs of a machine user's own data (name, description, access token type), on create and on change.
import { AccessTokenType } from "../../../../gen/svc/resources/user/v3alpha/user_pb.js";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/users";
import { Field, type FormError, Select } from "../../ui";

export function MachineFields({
  name,
  setName,
  description,
  setDescription,
  tokenType,
  setTokenType,
  error,
}: {
  name: string;
  setName: (v: string) => void;
  description: string;
  setDescription: (v: string) => void;
  tokenType: string;
  setTokenType: (v: string) => void;
  error: FormError;
}) {
  const t = useT(messages);
  const c = useT(coreMessages);
  return (
    <>
      <Field label={c("name")} name="user.machine.name" required value={name} onChange={(e) => setName(e.target.value)} error={error} />
      <Field label={t("description")} name="user.machine.description" value={description} onChange={(e) => setDescription(e.target.value)} error={error} />
      <Select
        label={t("accessTokenType")}
        name="user.machine.access_token_type"
        value={tokenType}
        onChange={setTokenType}
        error={error}
        options={[
          { value: String(AccessTokenType.OPAQUE), label: t("tokenOpaque") },
          { value: String(AccessTokenType.JWT), label: t("tokenJwt") },
        ]}
      />
    </>
  );
}
