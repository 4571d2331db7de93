// Helpers of the users section: mutations that refresh what they change, user states, and metadata values.
import type { DescMethodUnary, DescMessage } from "@bufbuild/protobuf";
import { createConnectQueryKey, useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { UserState } from "../../../../gen/svc/resources/user/v3alpha/user_pb.js";
import { UserService } from "../../../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { useAccess } from "../../access";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/users";

/** A mutation that, once it succeeded, refreshes the queries of its service (and the user's, which most change). */
export function useChange<I extends DescMessage, O extends DescMessage>(method: DescMethodUnary<I, O>) {
  const qc = useQueryClient();
  return useMutation(method, {
    onSuccess: async () => {
      await Promise.all([
        qc.invalidateQueries({ queryKey: createConnectQueryKey({ schema: method.parent, cardinality: undefined }) }),
        method.parent !== UserService ? qc.invalidateQueries({ queryKey: createConnectQueryKey({ schema: UserService, cardinality: undefined }) }) : undefined,
      ]);
    },
  });
}

/** A user state in words. */
export function useStateLabel(): (s: UserState) => string {
  const t = useT(messages);
  const c = useT(coreMessages);
  return (s) => {
    switch (s) {
      case UserState.ACTIVE:
        return c("active");
      case UserState.INACTIVE:
        return c("inactive");
      case UserState.LOCKED:
        return t("stateLocked");
      case UserState.INITIAL:
        return t("stateInitial");
      default:
        return t("stateUnknown");
    }
  };
}

/** A permission in the organisation of the user shown (which may not be the chosen one). */
export function useCanIn(orgId: string): (permission: string) => boolean {
  const access = useAccess();
  return (permission) => access.inOrg(permission, orgId);
}

/** Bytes of a metadata value as text: UTF-8 where it is, else base64. */
export function bytesText(b: Uint8Array): { text: string; base64: boolean } {
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(b), base64: false };
  } catch {
    let s = "";
    for (const x of b) s += String.fromCharCode(x);
    return { text: btoa(s), base64: true };
  }
}
